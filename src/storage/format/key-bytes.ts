// Key bytes live in the protocol leaf (src/protocol/key-bytes.ts); storage keeps this path for its
// own imports.
export * from '../../protocol/key-bytes.ts';
