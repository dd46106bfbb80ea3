// The stored-format marker: at a cluster's first start the metadata store and the object store each
// record the same { format_version, cluster_id }. At every start a star compares them and refuses to
// boot, with a one-line reason, when one plane was wiped without the other, the two hold different
// clusters, or a format this build does not write (spec: Versioning, "wiping only one plane is
// invalid"). Without it a star on a wiped metadata store and an old bucket (or the reverse) would
// start empty and hand out sequence numbers that name records already stored.
//
// Metadata is the arbiter: its marker is written insert-if-absent, so stars making their first start
// together agree on one cluster id, and the object marker is (re)written from it.

import type { MetadataStore, MetaState, StoredFormat } from './metadata/metadata-store.ts';
import { packedHasSegments } from './metadata/packed-row.ts';
import type { ObjectStore } from './objects/object-store.ts';
import { BootError } from '../config/boot-error.ts';

/** The layout of metadata and objects this build writes (frames and segments carry their own). */
export const STORED_FORMAT_VERSION = 1;
/** The object store's copy of the marker. */
export const FORMAT_OBJECT_KEY = 'svcd-format.json';
/** Where settled segments live (segments/segment-key.ts): any key here is stored data. */
const SEGMENTS_PREFIX = 'streams/';

/** A start refused: the message is the one line the star prints. */
export class StoredFormatError extends BootError {}

async function readObjectMarker(objects: ObjectStore): Promise<StoredFormat | undefined> {
  let bytes: Buffer;
  try {
    bytes = await objects.get(FORMAT_OBJECT_KEY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(bytes.toString('utf8')) as StoredFormat;
  } catch {
    throw new StoredFormatError(`objects: ${FORMAT_OBJECT_KEY} in the object store is not a format marker; it holds something other than svcd's data`);
  }
}

function checkVersion(f: StoredFormat, where: string): void {
  if (f.format_version !== STORED_FORMAT_VERSION) {
    throw new StoredFormatError(
      `${where}: stored format version ${f.format_version}, but this build reads and writes version ${STORED_FORMAT_VERSION}; `
      + 'crossing a stored-format boundary needs metadata and object storage wiped together',
    );
  }
}

/** Checks (and on a first start writes) both markers; resolves with the cluster's marker. */
export async function checkStoredFormat(
  state: MetaState, metadata: MetadataStore, objects: ObjectStore, newClusterId: () => string, nowMs: number,
): Promise<StoredFormat> {
  const onObjects = await readObjectMarker(objects);
  const objectsHoldData = (await objects.list(SEGMENTS_PREFIX, 1)).length > 0;
  const metadataHoldsData = state.buckets.length > 0 || state.streams.size > 0;
  let metadataPointsIntoObjects = false;
  state.streams.forEach((_b, _k, packed) => { metadataPointsIntoObjects ||= packedHasSegments(packed); });
  let marker = state.format;
  if (!marker) {
    // Metadata without a marker: a first start, or metadata written before markers existed.
    if (onObjects && objectsHoldData && !metadataHoldsData) {
      throw new StoredFormatError(
        `metadata: the metadata store is empty but the object store holds cluster ${onObjects.cluster_id}'s data: `
        + 'it was wiped without the object store (wipe both together, or point the star at the metadata that belongs to this bucket)',
      );
    }
    const proposed = onObjects ?? { format_version: STORED_FORMAT_VERSION, cluster_id: newClusterId(), created_unix_ms: nowMs };
    checkVersion(proposed, 'objects');
    marker = await metadata.putFormat(proposed);
  }
  checkVersion(marker, 'metadata');
  if (onObjects) {
    checkVersion(onObjects, 'objects');
    if (onObjects.cluster_id !== marker.cluster_id) {
      throw new StoredFormatError(
        `objects: the object store holds cluster ${onObjects.cluster_id}, the metadata store cluster ${marker.cluster_id}: `
        + 'they belong to different clusters (or one was wiped and reused); point the star at a matching pair',
      );
    }
    return marker;
  }
  if (metadataPointsIntoObjects && !objectsHoldData) {
    throw new StoredFormatError(
      `objects: the metadata of cluster ${marker.cluster_id} records settled segments, but the object store holds none: `
      + 'it was wiped without the metadata (wipe both together, or restore the bucket)',
    );
  }
  await objects.put(FORMAT_OBJECT_KEY, Buffer.from(JSON.stringify(marker)));
  return marker;
}
