// The glue between JavaScript and ptxmm_web.wasm (web/src/lib.rs): a JSON request is written into
// the module's memory, `ptxmm_request` answers, and the JSON answer is read back. No wasm-bindgen:
// the module exports plain functions and imports one clock (see README.md, "Web playground").

/** Instantiate ptxmm from the bytes (or a Response, or a promise of one) of ptxmm_web.wasm;
 *  returns { request }. */
export async function loadPtxmm(pending) {
  const source = await pending;
  if (source instanceof Response && !source.ok) throw new Error(`${source.url}: HTTP ${source.status}`);
  const imports = { env: { ptxmm_now_ms: () => performance.now() } };
  const { instance } =
    source instanceof Response
      ? await WebAssembly.instantiateStreaming(source, imports).catch(async () =>
          WebAssembly.instantiate(await source.clone().arrayBuffer(), imports))
      : await WebAssembly.instantiate(source, imports);
  const wasm = instance.exports;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const readResult = (len) => decoder.decode(new Uint8Array(wasm.memory.buffer, wasm.ptxmm_result_ptr(), len));
  let broken = null;
  /** Send one request object; returns the answer object. After a trap the module is unusable. */
  function request(req) {
    if (broken) throw new Error(`ptxmm stopped after an internal error: ${broken}`);
    const bytes = encoder.encode(JSON.stringify(req));
    const ptr = wasm.ptxmm_alloc(bytes.length);
    new Uint8Array(wasm.memory.buffer, ptr, bytes.length).set(bytes);
    try {
      return JSON.parse(readResult(wasm.ptxmm_request(ptr, bytes.length)));
    } catch (e) {
      let message = String(e);
      try {
        message = readResult(wasm.ptxmm_panic_message()) || message;
      } catch (_) {}
      broken = message;
      throw new Error(`ptxmm internal error (please report it): ${message}`);
    } finally {
      if (!broken) wasm.ptxmm_free(ptr, bytes.length);
    }
  }
  return { request };
}
