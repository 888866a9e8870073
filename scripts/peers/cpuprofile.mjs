// A synthetic V8 CPU profile (`.cpuprofile`, what `node --cpu-prof` and Chrome DevTools
// write) of about the requested size, deterministic from the seed:
//   node cpuprofile.mjs OUT.cpuprofile SIZE_BYTES [SEED [NODES]]
//
// The tree: one node per call path, written in depth-first order with `children` lists
// (what both old and new profiles carry); depth a random walk around ~20 levels (at most
// 64); functions shared between nodes (about one function per five nodes, a file per
// function group). 4000 nodes by default whatever the size (a mid-sized program's
// profile; about 0.7 MB of the file), so the samples are most of the file, as in real
// profiles. (Past ~6000 nodes the `nodes` array outgrows the first MiB, in which scorch
// looks for the `samples`/`timeDeltas` keys to recognise the format.) Samples: the previous sample's node again half
// the time (runs of one stack, as in a program that stays in a function), else any node;
// timeDeltas 900–1099 µs.

import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** mulberry32: a small, fast, seedable generator; returns floats in [0, 1). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Writer {
  constructor(file) {
    this.fd = fs.openSync(file, 'w');
    this.parts = [];
    this.pending = 0;
    this.bytes = 0;
  }
  write(s) {
    this.parts.push(s);
    this.pending += s.length;
    this.bytes += s.length;
    if (this.pending > 1 << 22) this.flush();
  }
  flush() {
    fs.writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.pending = 0;
  }
  close() {
    this.flush();
    fs.closeSync(this.fd);
  }
}

/** Writes a `.cpuprofile` of about `bytes` bytes (ASCII) to `file`. */
export function writeCpuprofile(file, bytes, seed = 7, nodeCount = 4000) {
  const functions = Math.max(100, Math.floor(nodeCount / 5));
  // The tree, depth first: node 1 is (root), node i's parent is on the current path.
  const parent = new Int32Array(nodeCount + 1);
  const tree = rng(seed * 3 + 1);
  const pathStack = [1];
  for (let i = 2; i <= nodeCount; i++) {
    const depth = pathStack.length;
    if (depth >= 64 || (depth > 3 && tree() < depth / 40)) {
      const k = 1 + Math.floor(tree() * 3);
      pathStack.length = Math.max(1, depth - k);
    }
    parent[i] = pathStack[pathStack.length - 1];
    pathStack.push(i);
  }
  const childStart = new Int32Array(nodeCount + 2);
  for (let i = 2; i <= nodeCount; i++) childStart[parent[i] + 1]++;
  for (let i = 1; i <= nodeCount + 1; i++) childStart[i] += childStart[i - 1];
  const childList = new Int32Array(nodeCount);
  const fill = childStart.slice();
  for (let i = 2; i <= nodeCount; i++) childList[fill[parent[i]]++] = i;
  const fnOf = rng(seed * 3 + 2);

  // The node list, with each node's hitCount (its self samples, as V8 writes them): the
  // samples are drawn first (a counting pass), the list written with their tallies.
  const frames = [];
  let nodeBytes = '{"nodes":['.length + 1;
  for (let i = 1; i <= nodeCount; i++) {
    let frame;
    if (i === 1) {
      frame = '{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}';
    } else {
      const f = Math.floor(fnOf() * functions);
      const group = f % 97;
      frame = `{"functionName":"${['handle', 'parse', 'render', 'update', 'compute', 'visit'][f % 6]}${f}","scriptId":"${group + 1}","url":"file:///app/src/module${group}.js","lineNumber":${f % 1000},"columnNumber":${f % 40}}`;
    }
    frames.push(frame);
    const kids = childStart[i + 1] - childStart[i];
    nodeBytes += frame.length + 40 + 8 * kids;
  }
  // How many samples fill the rest: the same generators run twice (count, then write).
  const tail = 64;
  const remaining = bytes - nodeBytes - tail;
  const sampleRng = () => rng(seed * 3 + 3);
  const deltaRng = () => rng(seed * 3 + 4);
  const nextSample = (r, prev) => (prev && r() < 0.5 ? prev : 2 + Math.floor(r() * (nodeCount - 1)));
  const nextDelta = (r) => 900 + Math.floor(r() * 200);
  const hits = new Float64Array(nodeCount + 1);
  let count = 0;
  {
    const rs = sampleRng();
    const rd = deltaRng();
    let used = 0;
    let prev = 0;
    while (used < remaining || count < 1) {
      prev = nextSample(rs, prev);
      hits[prev]++;
      used += String(prev).length + String(nextDelta(rd)).length + 2;
      count++;
    }
  }
  const w = new Writer(file);
  w.write('{"nodes":[');
  for (let i = 1; i <= nodeCount; i++) {
    const kids = Array.from(childList.subarray(childStart[i], childStart[i + 1]));
    w.write(`${i === 1 ? '' : ','}{"id":${i},"callFrame":${frames[i - 1]},"hitCount":${hits[i]}${kids.length ? `,"children":[${kids.join(',')}]` : ''}}`);
  }
  w.write(']');
  w.write(',"samples":[');
  {
    const rs = sampleRng();
    let prev = 0;
    let line = [];
    for (let k = 0; k < count; k++) {
      prev = nextSample(rs, prev);
      line.push(prev);
      if (line.length === 65536) {
        w.write((k >= 65536 ? ',' : '') + line.join(','));
        line = [];
      }
    }
    if (line.length) w.write((count > line.length ? ',' : '') + line.join(','));
  }
  w.write('],"timeDeltas":[');
  let total = 0;
  {
    const rd = deltaRng();
    let line = [];
    for (let k = 0; k < count; k++) {
      const d = nextDelta(rd);
      total += d;
      line.push(d);
      if (line.length === 65536) {
        w.write((k >= 65536 ? ',' : '') + line.join(','));
        line = [];
      }
    }
    if (line.length) w.write((count > line.length ? ',' : '') + line.join(','));
  }
  w.write(`],"startTime":0,"endTime":${total}}\n`);
  w.close();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [out, size, seed, nodes] = process.argv.slice(2);
  if (!out || !size) {
    console.error('usage: node cpuprofile.mjs OUT.cpuprofile SIZE_BYTES [SEED [NODES]]');
    process.exit(2);
  }
  writeCpuprofile(out, Number(size), Number(seed ?? 7), Number(nodes ?? 4000));
}
