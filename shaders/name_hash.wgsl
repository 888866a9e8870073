// name_hash.wgsl: MurmurHash3 x86_32 (seed 0) of every interned name's two color keys.
//
// Runs once per scene, one invocation per name. For name `i`, `keys[i]` locates two byte
// strings in `key_words` (packed little-endian, each key starting on a word boundary):
// the package part of the name (Pyroscope's coloring key) and the whole name. The result
// `hashes[i] = vec2(hash(package), hash(name))` is read by bars.wgsl to pick a palette
// entry, so a name is hashed once, not once per bar per frame.
//
// Mirrors `scorch::color::murmur3_32`; tests compare the two on published vectors.

struct NameKey {
    // Word offset and byte length of the package key.
    pkg_word: u32,
    pkg_len: u32,
    // Word offset and byte length of the whole-name key.
    full_word: u32,
    full_len: u32,
}

struct Params {
    // Number of names.
    count: u32,
    // Invocations per dispatch row (workgroups_x * 64), for 2-D dispatches of many names.
    row_stride: u32,
}

@group(0) @binding(0) var<storage, read> keys: array<NameKey>;
@group(0) @binding(1) var<storage, read> key_words: array<u32>;
@group(0) @binding(2) var<storage, read_write> hashes: array<vec2<u32>>;
@group(0) @binding(3) var<uniform> params: Params;

fn rotl(x: u32, r: u32) -> u32 {
    return (x << r) | (x >> (32u - r));
}

fn mix_k(k_in: u32) -> u32 {
    var k = k_in * 0xcc9e2d51u;
    k = rotl(k, 15u);
    return k * 0x1b873593u;
}

fn murmur3(word: u32, len: u32) -> u32 {
    var h = 0u;
    let blocks = len / 4u;
    for (var b = 0u; b < blocks; b = b + 1u) {
        h = h ^ mix_k(key_words[word + b]);
        h = rotl(h, 13u);
        h = h * 5u + 0xe6546b64u;
    }
    let tail = len & 3u;
    if (tail != 0u) {
        // Bytes past the key's end are zero-padded when packed, so masking is enough.
        let mask = (1u << (tail * 8u)) - 1u;
        h = h ^ mix_k(key_words[word + blocks] & mask);
    }
    h = h ^ len;
    h = h ^ (h >> 16u);
    h = h * 0x85ebca6bu;
    h = h ^ (h >> 13u);
    h = h * 0xc2b2ae35u;
    h = h ^ (h >> 16u);
    return h;
}

@compute @workgroup_size(64)
fn cs_main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x + id.y * params.row_stride;
    if (i >= params.count) {
        return;
    }
    let k = keys[i];
    hashes[i] = vec2<u32>(murmur3(k.pkg_word, k.pkg_len), murmur3(k.full_word, k.full_len));
}
