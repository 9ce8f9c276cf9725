// Crowd decode bench page (scripts/bench-crowd.mjs serves and drives it): opens the clips
// listed in /clips/index.json and times src/bench/crowd-timing.ts's measureCrowd for each
// crowd size and output given in the query (?sizes=100,1000&outputs=local,object12).
import { CompressedClip } from '/dist/runtime/compressed-clip.js';
import { measureCrowd } from '/dist/bench/crowd-timing.js';

const out = document.getElementById('out');
try {
  const query = new URLSearchParams(location.search);
  const sizes = (query.get('sizes') ?? '100,1000,10000').split(',').map(Number);
  const outputs = (query.get('outputs') ?? 'local').split(',');
  const frames = Number(query.get('frames') ?? 120);
  const names = await (await fetch('/clips/index.json')).json();
  const clips = [];
  for (const name of names)
    clips.push(
      CompressedClip.open(new Uint8Array(await (await fetch(`/clips/${encodeURIComponent(name)}`)).arrayBuffer())),
    );
  const results = [];
  for (const output of outputs) {
    for (const characters of sizes) {
      results.push(measureCrowd(clips, { characters, output, frames }));
      out.textContent = JSON.stringify(results, null, 1);
    }
  }
  window.crowdResult = {
    userAgent: navigator.userAgent,
    crossOriginIsolated: self.crossOriginIsolated,
    decoder: clips[0]?.decoder,
    results,
  };
  document.body.dataset.ready = '1';
} catch (error) {
  out.textContent = String(error?.stack || error);
  window.crowdResult = { error: String(error?.stack || error) };
  document.body.dataset.ready = 'error';
}
