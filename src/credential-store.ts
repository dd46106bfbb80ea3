// The credential registry (src/auth) keeps its rows in the metadata store (src/storage): this adapter
// is the one place the two meet, used by the star and by the credentials CLI.

import type { CredentialRow, CredentialStore } from './auth/credentials.ts';
import type { MetadataStore } from './storage/metadata/metadata-store.ts';

export function credentialStoreOf(metadata: MetadataStore): CredentialStore {
  return {
    async get(keyId) { return (await metadata.readCredential(keyId)) as unknown as CredentialRow | undefined; },
    async put(row) { await metadata.putCredential({ ...row }); },
    async list() { return (await metadata.listCredentials()) as unknown as CredentialRow[]; },
  };
}
