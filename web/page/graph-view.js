// Zoom and pan of the explanation's drawing, without any library: the SVG is drawn at
// `zoom` times its own size inside a scrolling panel; the wheel zooms about the pointer, a drag
// pans, the buttons zoom, fit or reset. The default zoom is the drawing's own size (where no
// text is under 11 px, see svg.rs), or larger when it fits, centred on the highlighted events.

const MIN_ZOOM = 0.1;
const MAX_ZOOM = 4;
/** Small drawings are enlarged to fit the panel, up to this factor. */
const MAX_DEFAULT_ZOOM = 1.5;

export class GraphView {
  constructor(viewport, onZoom) {
    this.viewport = viewport;
    this.onZoom = onZoom;
    this.svg = null;
    this.zoom = 1;
    viewport.addEventListener('wheel', (e) => {
      if (!this.svg) return;
      e.preventDefault();
      const box = viewport.getBoundingClientRect();
      this.setZoom(this.zoom * Math.exp(-e.deltaY * 0.0015), { x: e.clientX - box.left, y: e.clientY - box.top });
    }, { passive: false });
    let drag = null;
    viewport.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, left: viewport.scrollLeft, top: viewport.scrollTop };
      viewport.setPointerCapture(e.pointerId);
      viewport.classList.add('dragging');
    });
    viewport.addEventListener('pointermove', (e) => {
      if (!drag) return;
      viewport.scrollLeft = drag.left - (e.clientX - drag.x);
      viewport.scrollTop = drag.top - (e.clientY - drag.y);
    });
    const end = () => {
      drag = null;
      viewport.classList.remove('dragging');
    };
    viewport.addEventListener('pointerup', end);
    viewport.addEventListener('pointercancel', end);
  }

  /** Show `svgText` at the default zoom. */
  show(svgText) {
    this.viewport.innerHTML = svgText;
    this.svg = this.viewport.querySelector('svg');
    if (!this.svg) return;
    this.width = parseFloat(this.svg.getAttribute('width')) || 1;
    this.height = parseFloat(this.svg.getAttribute('height')) || 1;
    this.reset();
  }

  /** The zoom at which the whole drawing fits the panel. */
  fitZoom() {
    const maxHeight = parseFloat(getComputedStyle(this.viewport).maxHeight) || window.innerHeight * 0.7;
    return Math.min((this.viewport.clientWidth - 4) / this.width, (maxHeight - 4) / this.height);
  }

  /** The drawing's own size (or larger when it fits), the highlighted events in view. */
  reset() {
    const fit = this.fitZoom();
    this.setZoom(fit > 1 ? Math.min(fit, MAX_DEFAULT_ZOOM) : 1);
    this.centreOnFocus();
  }

  fit() {
    this.setZoom(this.fitZoom());
  }

  /** Zoom to `zoom`, keeping the drawing's point under `anchor` (panel pixels; default: the centre) in place. */
  setZoom(zoom, anchor) {
    if (!this.svg) return;
    const z = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, zoom));
    const v = this.viewport;
    const at = anchor || { x: v.clientWidth / 2, y: v.clientHeight / 2 };
    const ux = (v.scrollLeft + at.x) / this.zoom;
    const uy = (v.scrollTop + at.y) / this.zoom;
    this.zoom = z;
    this.svg.style.width = `${this.width * z}px`;
    this.svg.style.height = `${this.height * z}px`;
    v.scrollLeft = ux * z - at.x;
    v.scrollTop = uy * z - at.y;
    this.onZoom(z);
  }

  /** Scroll so that the highlighted events (class `focus`) are in the middle of the panel. */
  centreOnFocus() {
    const focus = [...this.svg.querySelectorAll('rect.focus')];
    const v = this.viewport;
    if (!focus.length) {
      v.scrollLeft = 0;
      v.scrollTop = 0;
      return;
    }
    const panel = v.getBoundingClientRect();
    const boxes = focus.map((r) => r.getBoundingClientRect());
    const left = Math.min(...boxes.map((b) => b.left));
    const right = Math.max(...boxes.map((b) => b.right));
    const top = Math.min(...boxes.map((b) => b.top));
    const bottom = Math.max(...boxes.map((b) => b.bottom));
    // Only where the focus fits; else its top-left corner.
    const x = right - left < v.clientWidth ? (left + right) / 2 - panel.left - v.clientWidth / 2 : left - panel.left - 20;
    const y = bottom - top < v.clientHeight ? (top + bottom) / 2 - panel.top - v.clientHeight / 2 : top - panel.top - 20;
    v.scrollLeft += x;
    v.scrollTop += y;
  }
}
