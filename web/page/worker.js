// Runs ptxmm off the page's thread, so a long search leaves the page responsive and Stop can
// terminate it. Messages in: { id, request }; out: { ready, info } once, then { id, answer } or
// { id, error }.
import { loadPtxmm } from './ptxmm.js';

const ptxmm = loadPtxmm(fetch(new URL('ptxmm_web.wasm', import.meta.url)));

ptxmm.then(
  (p) => postMessage({ ready: true, info: p.request({ op: 'info' }) }),
  (e) => postMessage({ ready: false, error: `cannot load ptxmm_web.wasm: ${e}` }),
);

onmessage = async ({ data: { id, request } }) => {
  try {
    postMessage({ id, answer: (await ptxmm).request(request) });
  } catch (e) {
    postMessage({ id, error: String(e && e.message ? e.message : e) });
  }
};
