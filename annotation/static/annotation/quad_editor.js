// The image canvas both annotation pages share: the picture inside a stage that zooms and pans,
// and one quadrilateral per question-answer pair drawn over it, with draggable corners.
//
// Drawing library: Konva (10.9.1, pinned in package.json, served as vendor/konva/konva.min.js and
// loaded by a classic <script> before these modules, as the global `Konva`). It is what Label
// Studio's image editor is built on and it is maintained; it handles the hit-testing (which shape
// is under the pointer), draggable shapes and the stage transform (zoom and pan), so every shape
// lives in image pixels whatever the zoom. Here one press of the mouse is a click, a pan or a
// corner drag, decided in one place (pointerDown/Move/Up below) from the browser's sub-pixel
// pointer positions: the corner handles are moved there rather than by Konva's own dragging, so a
// corner lets go exactly on the image pixel under the pointer and a drag never also counts as a
// click or a pan.
//
// Coordinates: the shapes are in image pixels; the stage's scale and position are the view. A
// click becomes image pixels through the transform at the moment it lands, so zooming or panning
// between the four clicks of a quadrilateral never moves the corners already placed. A press that
// moves more than CLICK_SLOP screen pixels before it is let go pans the view and places nothing.
//
// What the editor is told and tells back (the page owns the pairs, the editor their quads):
//   new QuadEditor(frame, { width, height, imageUrl, quads, context, onChange, onSelect, onState })
//   frame holds a .quad-canvas element (the stage) and optionally buttons [data-zoom="fit|in|out"]
//   and a .zoom-level element. quads: [8 numbers or null] per pair; context: quads drawn dimmed
//   that nobody edits (the reviewer sees the image's other pairs).
//   onChange(index, quad) after every committed edit (a quad closed, a corner let go, an undo);
//   onSelect(index) when a quad is clicked; onState({ drawing, corners }) while drawing.
// Undo and redo keep a history per quad, so they follow the pair when pairs are added or deleted.

const HANDLE_RADIUS = 6; // corner handles, in screen pixels whatever the zoom
const CLICK_SLOP = 4; // screen pixels a press may move and still be a click
const MAX_SCALE = 40;
const ZOOM_STEP = 1.25;

const COLOURS = {
  selected: { stroke: "#ffd600", fill: "rgba(255, 214, 0, 0.18)", width: 2.5, opacity: 1 },
  other: { stroke: "#8fb3ff", fill: "rgba(47, 91, 211, 0.14)", width: 1.5, opacity: 0.7 },
  context: { stroke: "#ffffff", fill: "rgba(255, 255, 255, 0.06)", width: 1.25, opacity: 0.55 },
};

export const round1 = (value) => Math.round(value * 10) / 10;
const clamp = (value, low, high) => Math.min(Math.max(value, low), high);
const isQuad = (quad) => Array.isArray(quad) && quad.length === 8 && quad.every(Number.isFinite);
const copy = (quad) => (isQuad(quad) ? quad.map(Number) : null);

// True when a key press belongs to a text field (shortcuts then stay out of its way).
export function isTyping(event) {
  const target = event.target;
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
  return target.tagName === "INPUT" && !["checkbox", "radio", "button", "submit"].includes(target.type);
}

export class QuadEditor {
  constructor(frame, options) {
    const { width, height, imageUrl, quads = [], context = [], selected = 0 } = options;
    this.frame = frame;
    this.width = width;
    this.height = height;
    this.onChange = options.onChange || (() => {});
    this.onSelect = options.onSelect || (() => {});
    this.onState = options.onState || (() => {});
    this.editable = options.editable !== false;
    this.items = quads.map((quad) => ({ points: copy(quad), undo: [], redo: [] }));
    this.context = context.filter(isQuad).map(copy);
    this.selectedIndex = this.items.length ? clamp(selected, 0, this.items.length - 1) : -1;
    this.drawing = null; // { index, points: [x, y, ...] } while a quad is being drawn
    this.press = null; // the mouse button held down on the canvas, until it is let go
    this.pointer = null; // the last pointer position over the canvas, in container pixels
    this.spaceHeld = false;
    this.fitted = true; // refit when the canvas changes size, until the user zooms or pans
    this.listeners = [];

    this.container = frame.querySelector(".quad-canvas");
    this.container.tabIndex = 0;
    this.stage = new Konva.Stage({
      container: this.container,
      width: Math.max(1, this.container.clientWidth),
      height: Math.max(1, this.container.clientHeight),
    });
    const imageLayer = new Konva.Layer({ listening: false });
    imageLayer.add(new Konva.Rect({ width, height, fill: "#d0d4dc" }));
    this.imageNode = new Konva.Image({ width, height, image: null });
    imageLayer.add(this.imageNode);
    this.shapeLayer = new Konva.Layer();
    this.drawLayer = new Konva.Layer({ listening: false });
    this.stage.add(imageLayer, this.shapeLayer, this.drawLayer);
    this.ready = this.loadImage(imageUrl, imageLayer);

    this.bindPointer();
    this.bindControls();
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(this.container);
    this.fit();
    this.render();
  }

  // ---- the picture and the view ----

  loadImage(url, layer) {
    return new Promise((resolve) => {
      if (!url) return resolve(false);
      const image = new Image();
      image.onload = () => {
        this.imageNode.image(image);
        layer.batchDraw();
        resolve(true);
      };
      image.onerror = () => resolve(false);
      image.src = url;
    });
  }

  scale() {
    return this.stage.scaleX();
  }

  fitScale() {
    return Math.min(this.stage.width() / this.width, this.stage.height() / this.height);
  }

  fit() {
    const scale = this.fitScale();
    this.stage.scale({ x: scale, y: scale });
    this.stage.position({
      x: (this.stage.width() - this.width * scale) / 2,
      y: (this.stage.height() - this.height * scale) / 2,
    });
    this.fitted = true;
    this.viewChanged();
  }

  // Zooms by `factor` keeping the image pixel under `at` (container pixels; default the centre) still.
  zoomBy(factor, at = null) {
    const point = at || { x: this.stage.width() / 2, y: this.stage.height() / 2 };
    const old = this.scale();
    const scale = clamp(old * factor, Math.min(0.05, this.fitScale() / 2), MAX_SCALE);
    const anchor = this.toImage(point);
    this.stage.scale({ x: scale, y: scale });
    this.stage.position({ x: point.x - anchor.x * scale, y: point.y - anchor.y * scale });
    this.fitted = false;
    this.viewChanged();
  }

  resize() {
    const width = this.container.clientWidth;
    const height = this.container.clientHeight;
    if (!width || !height || (width === this.stage.width() && height === this.stage.height())) return;
    this.stage.size({ width, height });
    if (this.fitted) this.fit();
    else this.viewChanged();
  }

  // After a zoom or a pan: the handles and labels keep their screen size, the rubber band follows.
  viewChanged() {
    const inverse = 1 / this.scale();
    for (const node of this.stage.find(".fixed-size")) node.scale({ x: inverse, y: inverse });
    this.updateRubberBand();
    const level = this.frame.querySelector(".zoom-level");
    if (level) level.textContent = `${Math.round(this.scale() * 100)}%`;
    this.stage.batchDraw();
  }

  // Container pixels to image pixels, with the transform as it is now.
  toImage(point) {
    const scale = this.scale();
    return { x: (point.x - this.stage.x()) / scale, y: (point.y - this.stage.y()) / scale };
  }

  localPoint(event) {
    const box = this.container.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  }

  // Image pixels to page (client) coordinates: where a click lands on that pixel.
  imageToScreen(x, y) {
    const box = this.container.getBoundingClientRect();
    const scale = this.scale();
    return { x: box.left + this.stage.x() + x * scale, y: box.top + this.stage.y() + y * scale };
  }

  screenToImage(clientX, clientY) {
    return this.toImage(this.localPoint({ clientX, clientY }));
  }

  // ---- the quads ----

  get selected() {
    return this.selectedIndex;
  }

  quad(index) {
    const item = this.items[index];
    return item ? copy(item.points) : null;
  }

  quads() {
    return this.items.map((item) => copy(item.points));
  }

  // Replaces every quad (their histories start again), e.g. when the server's version is taken.
  setQuads(quads, selected = this.selectedIndex) {
    this.drawing = null;
    this.items = quads.map((quad) => ({ points: copy(quad), undo: [], redo: [] }));
    this.selectedIndex = this.items.length ? clamp(selected, 0, this.items.length - 1) : -1;
    this.render();
    this.emitState();
  }

  addQuad(quad = null) {
    this.items.push({ points: copy(quad), undo: [], redo: [] });
    this.render();
    return this.items.length - 1;
  }

  removeQuad(index) {
    if (this.drawing) this.cancelDrawing();
    this.items.splice(index, 1);
    if (this.selectedIndex > index) this.selectedIndex -= 1;
    this.selectedIndex = Math.min(this.selectedIndex, this.items.length - 1);
    this.render();
  }

  select(index) {
    if (index < 0 || index >= this.items.length || index === this.selectedIndex) return;
    if (this.drawing) this.cancelDrawing();
    this.selectedIndex = index;
    this.render();
  }

  // A committed edit: recorded for undo, then the page is told.
  commit(index, quad) {
    const item = this.items[index];
    const next = copy(quad);
    if (JSON.stringify(item.points) === JSON.stringify(next)) return;
    item.undo.push(item.points);
    item.redo = [];
    item.points = next;
    this.render();
    this.onChange(index, copy(next));
  }

  undo(index = this.selectedIndex) {
    if (this.drawing) {
      // While drawing, undo takes back the last corner placed (and the drawing, when none is left).
      this.drawing.points.splice(-2, 2);
      if (!this.drawing.points.length) this.cancelDrawing();
      else this.drawingChanged();
      return true;
    }
    const item = this.items[index];
    if (!item || !item.undo.length) return false;
    item.redo.push(item.points);
    item.points = item.undo.pop();
    this.render();
    this.onChange(index, copy(item.points));
    return true;
  }

  redo(index = this.selectedIndex) {
    const item = this.items[index];
    if (this.drawing || !item || !item.redo.length) return false;
    item.undo.push(item.points);
    item.points = item.redo.pop();
    this.render();
    this.onChange(index, copy(item.points));
    return true;
  }

  // ---- drawing: four clicks ----

  startDrawing(index = this.selectedIndex) {
    if (!this.editable || index < 0 || index >= this.items.length) return;
    this.selectedIndex = index;
    this.drawing = { index, points: [] };
    this.container.focus({ preventScroll: true });
    this.render();
    this.emitState();
  }

  cancelDrawing() {
    if (!this.drawing) return false;
    this.drawing = null;
    this.render();
    this.emitState();
    return true;
  }

  isDrawing() {
    return this.drawing !== null;
  }

  placeCorner(point) {
    const drawing = this.drawing;
    drawing.points.push(round1(clamp(point.x, 0, this.width)), round1(clamp(point.y, 0, this.height)));
    if (drawing.points.length < 8) {
      this.drawingChanged();
      return;
    }
    this.drawing = null;
    this.commit(drawing.index, drawing.points);
    this.render();
    this.emitState();
  }

  drawingChanged() {
    this.updateRubberBand();
    this.emitState();
  }

  emitState() {
    this.container.classList.toggle("drawing", Boolean(this.drawing));
    this.onState({
      drawing: this.drawing ? this.drawing.index : null,
      corners: this.drawing ? this.drawing.points.length / 2 : 0,
    });
  }

  // The corners placed so far, joined, and a dashed line from the last one to the pointer.
  updateRubberBand() {
    this.drawLayer.destroyChildren();
    if (this.drawing && this.drawing.points.length) {
      const points = [...this.drawing.points];
      const placed = new Konva.Line({
        points,
        stroke: COLOURS.selected.stroke,
        strokeWidth: 2,
        strokeScaleEnabled: false,
      });
      this.drawLayer.add(placed);
      if (this.pointer) {
        const at = this.toImage(this.pointer);
        const end = [clamp(at.x, 0, this.width), clamp(at.y, 0, this.height)];
        const band = [...points.slice(-2), ...end];
        if (points.length === 6) band.push(points[0], points[1]); // the fourth corner closes it
        this.drawLayer.add(
          new Konva.Line({ points: band, stroke: "#ffffff", strokeWidth: 1.5, dash: [6, 4], strokeScaleEnabled: false }),
        );
      }
      for (let i = 0; i < points.length; i += 2) this.drawLayer.add(this.handle(points[i], points[i + 1], false));
    }
    const inverse = 1 / this.scale();
    for (const node of this.drawLayer.find(".fixed-size")) node.scale({ x: inverse, y: inverse });
    this.drawLayer.batchDraw();
  }

  handle(x, y, movable) {
    return new Konva.Circle({
      x,
      y,
      radius: HANDLE_RADIUS,
      fill: COLOURS.selected.stroke,
      stroke: "#1d2330",
      strokeWidth: 1.5,
      hitStrokeWidth: 10,
      listening: movable,
      name: movable ? "fixed-size handle" : "fixed-size",
    });
  }

  label(text, x, y, colour) {
    const label = new Konva.Label({ x, y, listening: false, name: "fixed-size" });
    label.add(new Konva.Tag({ fill: colour, cornerRadius: 3, pointerDirection: "down", pointerWidth: 6, pointerHeight: 4 }));
    label.add(new Konva.Text({ text, fontSize: 12, fontStyle: "bold", padding: 3, fill: "#1d2330" }));
    return label;
  }

  // Draws every quad again: the selected one bright with its handles, the others dimmed.
  render() {
    this.shapeLayer.destroyChildren();
    this.corners = null;
    const interactive = this.editable && !this.drawing;
    for (const quad of this.context) this.shapeLayer.add(this.polygon(quad, COLOURS.context, false));
    this.items.forEach((item, index) => {
      if (!item.points || index === this.selectedIndex) return;
      const polygon = this.polygon(item.points, COLOURS.other, interactive);
      polygon.setAttr("quadIndex", index);
      this.shapeLayer.add(polygon, this.label(String(index + 1), item.points[0], item.points[1], COLOURS.other.stroke));
    });
    const item = this.items[this.selectedIndex];
    if (item && item.points && !(this.drawing && this.drawing.index === this.selectedIndex)) {
      const points = item.points;
      const polygon = this.polygon(points, COLOURS.selected, interactive);
      polygon.setAttr("quadIndex", this.selectedIndex);
      this.shapeLayer.add(polygon);
      if (this.items.length > 1) {
        this.shapeLayer.add(this.label(String(this.selectedIndex + 1), points[0], points[1], COLOURS.selected.stroke));
      }
      if (interactive) this.addHandles(polygon, points);
    }
    this.container.classList.toggle("drawing", Boolean(this.drawing));
    this.viewChanged();
  }

  polygon(points, colour, listening) {
    return new Konva.Line({
      points: [...points],
      closed: true,
      stroke: colour.stroke,
      fill: colour.fill,
      strokeWidth: colour.width,
      opacity: colour.opacity,
      strokeScaleEnabled: false,
      dash: colour === COLOURS.context ? [6, 4] : undefined,
      listening,
      name: listening ? "quad" : "",
    });
  }

  // The selected quad's corners, to drag (see pointerMove): kept in this.corners with their polygon.
  addHandles(polygon, points) {
    const handles = [];
    for (let corner = 0; corner < 4; corner += 1) {
      const handle = this.handle(points[corner * 2], points[corner * 2 + 1], true);
      handle.setAttr("corner", corner);
      handle.on("mouseenter", () => this.container.classList.add("over-handle"));
      handle.on("mouseleave", () => this.container.classList.remove("over-handle"));
      handles.push(handle);
      this.shapeLayer.add(handle);
    }
    this.corners = { index: this.selectedIndex, polygon, handles, points: [...points] };
  }

  // Moves corner `corner` of the selected quad to image point `point` (kept inside the image).
  moveCorner(corner, point) {
    const { polygon, handles, points } = this.corners;
    const x = clamp(point.x, 0, this.width);
    const y = clamp(point.y, 0, this.height);
    points[corner * 2] = x;
    points[corner * 2 + 1] = y;
    handles[corner].position({ x, y });
    polygon.points([...points]);
    this.shapeLayer.batchDraw();
  }

  // ---- the mouse: click, pan, wheel ----

  listen(target, type, handler, options) {
    target.addEventListener(type, handler, options);
    this.listeners.push(() => target.removeEventListener(type, handler, options));
  }

  bindPointer() {
    const container = this.container;
    this.listen(container, "pointerdown", (event) => this.pointerDown(event));
    this.listen(window, "pointermove", (event) => this.pointerMove(event));
    this.listen(window, "pointerup", (event) => this.pointerUp(event));
    this.listen(window, "pointercancel", () => this.endPress());
    this.listen(container, "pointerleave", () => {
      this.pointer = null;
      this.updateRubberBand();
    });
    this.listen(container, "mousedown", (event) => {
      if (event.button === 1) event.preventDefault(); // no autoscroll on the middle button
    });
    this.listen(container, "contextmenu", (event) => {
      if (this.drawing) event.preventDefault();
    });
    this.listen(
      container,
      "wheel",
      (event) => {
        event.preventDefault();
        const pixels = event.deltaY * (event.deltaMode === 1 ? 33 : event.deltaMode === 2 ? 400 : 1);
        this.zoomBy(Math.exp(-pixels * 0.0018), this.localPoint(event));
      },
      { passive: false },
    );
    this.listen(window, "keydown", (event) => {
      if (event.key === " " && !isTyping(event) && !(event.target instanceof HTMLButtonElement)) {
        if (!this.spaceHeld) container.classList.add("space-pan");
        this.spaceHeld = true;
        if (this.pointer || document.activeElement === container) event.preventDefault(); // no page scroll
      }
    });
    this.listen(window, "keyup", (event) => {
      if (event.key !== " ") return;
      this.spaceHeld = false;
      container.classList.remove("space-pan");
    });
    this.listen(window, "blur", () => {
      this.spaceHeld = false;
      container.classList.remove("space-pan");
    });
  }

  pointerDown(event) {
    if (event.button !== 0 && event.button !== 1) return;
    if (document.activeElement !== this.container) this.container.focus({ preventScroll: true });
    const local = this.localPoint(event);
    this.pointer = local;
    const target = this.stage.getIntersection(local);
    const panOnly = event.button === 1 || this.spaceHeld;
    this.press = {
      id: event.pointerId,
      x: event.clientX,
      y: event.clientY,
      start: this.stage.position(),
      target,
      panOnly,
      panning: false,
      corner: null,
    };
    if (!panOnly && target && target.hasName("handle") && this.corners) {
      // A corner is grabbed: where in the handle it was grabbed is kept, so it does not jump.
      const at = this.toImage(local);
      const corner = target.getAttr("corner");
      this.press.corner = { corner, dx: at.x - target.x(), dy: at.y - target.y(), moved: false };
      this.container.classList.add("dragging");
    }
  }

  pointerMove(event) {
    const inside = event.target instanceof Node && this.container.contains(event.target);
    if (inside || this.press) this.pointer = this.localPoint(event);
    const press = this.press;
    if (press && press.id === event.pointerId && press.corner) {
      const at = this.toImage(this.pointer);
      const grab = press.corner;
      grab.moved = grab.moved || event.clientX !== press.x || event.clientY !== press.y;
      if (grab.moved) this.moveCorner(grab.corner, { x: at.x - grab.dx, y: at.y - grab.dy });
      return;
    }
    if (press && press.id === event.pointerId) {
      const dx = event.clientX - press.x;
      const dy = event.clientY - press.y;
      if (!press.panning && Math.hypot(dx, dy) > CLICK_SLOP) {
        press.panning = true;
        this.container.classList.add("panning");
      }
      if (press.panning) {
        this.stage.position({ x: press.start.x + dx, y: press.start.y + dy });
        this.fitted = false;
        this.viewChanged();
        return;
      }
    }
    if (this.drawing) this.updateRubberBand();
  }

  endPress() {
    const press = this.press;
    this.press = null;
    this.container.classList.remove("panning", "dragging");
    if (press && press.corner && press.corner.moved) this.render(); // a cancelled drag: back as it was
  }

  pointerUp(event) {
    const press = this.press;
    if (!press || press.id !== event.pointerId) return;
    if (press.corner) {
      this.press = null;
      this.container.classList.remove("dragging");
      if (press.corner.moved) this.commit(this.corners.index, this.corners.points.map(round1));
      return;
    }
    this.endPress();
    if (press.panning || press.panOnly) return;
    this.click(this.localPoint(event), press.target);
  }

  // A click (not a pan): a corner while drawing; else select the quad under it; else, when the
  // selected pair has no quad yet, the click is its first corner.
  click(local, target) {
    if (!this.editable) return;
    const point = this.toImage(local);
    if (this.drawing) {
      this.placeCorner(point);
      return;
    }
    if (target && target.hasName("quad")) {
      const index = target.getAttr("quadIndex");
      if (index !== this.selectedIndex) {
        this.select(index);
        this.onSelect(index);
      }
      return;
    }
    const item = this.items[this.selectedIndex];
    if (item && !item.points) {
      this.startDrawing(this.selectedIndex);
      this.placeCorner(point);
    }
  }

  // ---- buttons and keys ----

  bindControls() {
    for (const button of this.frame.querySelectorAll("[data-zoom]")) {
      this.listen(button, "click", () => {
        const action = button.dataset.zoom;
        if (action === "fit") this.fit();
        else this.zoomBy(action === "in" ? ZOOM_STEP : 1 / ZOOM_STEP);
      });
    }
  }

  // The editor's keys: 0 fit, + / - zoom, Escape cancels a drawing, Ctrl+Z undo, Ctrl+Shift+Z or
  // Ctrl+Y redo. Returns true when the key was the editor's (the page then stops there).
  handleKey(event) {
    const ctrl = event.ctrlKey || event.metaKey;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key === "Escape") return this.cancelDrawing();
    if (isTyping(event)) return false;
    if (ctrl && key === "z") return (event.shiftKey ? this.redo() : this.undo()) || true;
    if (ctrl && key === "y") return this.redo() || true;
    if (ctrl || event.altKey) return false;
    if (key === "0") this.fit();
    else if (key === "+" || key === "=") this.zoomBy(ZOOM_STEP);
    else if (key === "-" || key === "_") this.zoomBy(1 / ZOOM_STEP);
    else return false;
    return true;
  }

  destroy() {
    for (const remove of this.listeners) remove();
    this.resizeObserver.disconnect();
    this.stage.destroy();
  }
}

// Makes `editor` the one browser tests reach through window.yardstickEditor.
export function exposeForTests(editor) {
  window.yardstickEditor = {
    imageToScreen: (x, y) => editor.imageToScreen(x, y),
    screenToImage: (x, y) => editor.screenToImage(x, y),
    quad: (index) => editor.quad(index),
    quads: () => editor.quads(),
    zoom: () => editor.scale(),
    selected: () => editor.selected,
    drawing: () => editor.isDrawing(),
    editor,
  };
}

// ---- what both annotation pages share besides the canvas ----

// The page's words, from the template (translated there): <span data-label="key">text</span>
// inside #labels. format("{n} of {m}", {n: 1, m: 3}) fills the braces.
export function readLabels(root = document.getElementById("labels")) {
  const labels = {};
  if (root) for (const node of root.querySelectorAll("[data-label]")) labels[node.dataset.label] = node.textContent.trim();
  return labels;
}

export const format = (text, values) => text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));

// An element with attributes ("text" sets its text, "class" its class) and children.
export function make(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}

// The language a question is in, by the released evaluator's rule: "ch" when any character is in
// U+4E00..U+9FA5, else "en".
export const languageOf = (text) => (/[\u4e00-\u9fa5]/.test(text || "") ? "ch" : "en");

// Eight numbers as "x1, y1 · x2, y2 · ..." for people to read.
export function quadText(quad) {
  if (!isQuad(quad)) return "–";
  const corners = [];
  for (let i = 0; i < 8; i += 2) corners.push(`${round1(quad[i])}, ${round1(quad[i + 1])}`);
  return corners.join(" · ");
}
