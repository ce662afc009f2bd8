// Parses a GGUF file with @huggingface/gguf (an independent implementation) and prints
// what it found as JSON: version, metadata, tensor infos and the data section's offset.
// usage: node tests/gguf_js/parse.mjs FILE.gguf
import { gguf } from "@huggingface/gguf";
import { resolve } from "node:path";

const file = process.argv[2];
if (!file) {
  console.error("usage: node parse.mjs FILE.gguf");
  process.exit(2);
}
const { metadata, tensorInfos, tensorDataOffset } = await gguf(resolve(file), { allowLocalFile: true });
const plain = (v) => (typeof v === "bigint" ? v.toString() : Array.isArray(v) ? v.map(plain) : v);
const out = {
  version: metadata.version,
  tensor_count: plain(metadata.tensor_count),
  kv_count: plain(metadata.kv_count),
  metadata: Object.fromEntries(
    Object.entries(metadata).filter(([k]) => !["version", "tensor_count", "kv_count"].includes(k)).map(([k, v]) => [k, plain(v)])
  ),
  tensors: tensorInfos.map((t) => ({ name: t.name, n_dims: t.n_dims, shape: plain(t.shape), dtype: t.dtype, offset: plain(t.offset) })),
  data_offset: plain(tensorDataOffset),
};
console.log(JSON.stringify(out));
