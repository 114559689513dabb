// Draws an item's ground-truth regions (quadrilaterals, boxes) over its image, in the image's
// own pixel coordinates: the SVG's viewBox is the image's natural size, so it scales with it.
// Each label goes outside its region (right, left, above or below it), where it covers no region
// and no other label, so that the text a region outlines stays readable.
const SVG = "http://www.w3.org/2000/svg";
const GAP = 6;
const PAD = 2;
const MARGIN = 3;

function bounds(points) {
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  return {left: Math.min(...xs), top: Math.min(...ys), right: Math.max(...xs), bottom: Math.max(...ys)};
}

function overlaps(a, b) {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

// Where a label of this size may start around a region's bounds, best first, each with the
// direction it slides in when something is in the way.
function candidates(box, width, height) {
  const middle = (box.top + box.bottom) / 2 - height / 2;
  return [
    {left: box.right + GAP, top: middle, slide: [1, 0]},
    {left: box.left - GAP - width, top: middle, slide: [-1, 0]},
    {left: box.left, top: box.top - GAP - height, slide: [0, -1]},
    {left: box.left, top: box.bottom + GAP, slide: [0, 1]},
  ];
}

function spotAt(left, top, width, height) {
  return {left, top, right: left + width, bottom: top + height};
}

// Slide a label away from its region, past whatever it would cover, until it is free; null once
// it leaves the image.
function slide(start, width, height, taken, inside) {
  let spot = spotAt(start.left, start.top, width, height);
  const [dx, dy] = start.slide;
  for (let step = 0; step <= taken.length; step += 1) {
    if (!inside(spot)) return null;
    const hit = taken.find((other) => overlaps(spot, other));
    if (!hit) return spot;
    const left = dx > 0 ? hit.right + GAP : dx < 0 ? hit.left - GAP - width : spot.left;
    const top = dy > 0 ? hit.bottom + GAP : dy < 0 ? hit.top - GAP - height : spot.top;
    spot = spotAt(left, top, width, height);
  }
  return null;
}

function place(box, width, height, taken, frame) {
  const inside = (spot) =>
    spot.left >= 0 && spot.top >= 0 && spot.right <= frame.width && spot.bottom <= frame.height;
  const starts = candidates(box, width, height);
  for (const start of starts) {
    const spot = slide(start, width, height, taken, inside);
    if (spot) return spot;
  }
  // Nowhere free: above the region (covering as little as it must), kept on the image.
  const left = Math.min(Math.max(starts[2].left, 0), Math.max(frame.width - width, 0));
  const top = Math.min(Math.max(starts[2].top, 0), Math.max(frame.height - height, 0));
  return spotAt(left, top, width, height);
}

function draw(image, regions) {
  const frame = {width: image.naturalWidth, height: image.naturalHeight};
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${frame.width} ${frame.height}`);
  svg.setAttribute("class", "regions");
  image.after(svg);
  const boxes = regions.map((region) => bounds(region.points));
  for (const region of regions) {
    const polygon = document.createElementNS(SVG, "polygon");
    polygon.setAttribute("points", region.points.map(([x, y]) => `${x},${y}`).join(" "));
    const title = document.createElementNS(SVG, "title");
    title.textContent = region.label;
    polygon.append(title);
    svg.append(polygon);
  }
  // Labels after every outline, so that none is drawn under another region's fill; a label keeps
  // clear of every outline's stroke too.
  const taken = boxes.map((box) => ({
    left: box.left - MARGIN,
    top: box.top - MARGIN,
    right: box.right + MARGIN,
    bottom: box.bottom + MARGIN,
  }));
  regions.forEach((region, index) => {
    if (!region.label) return;
    const group = document.createElementNS(SVG, "g");
    group.setAttribute("class", "region-label");
    const backing = document.createElementNS(SVG, "rect");
    const label = document.createElementNS(SVG, "text");
    label.textContent = region.label;
    label.setAttribute("dominant-baseline", "hanging");
    group.append(backing, label);
    svg.append(group);
    const size = label.getBBox();
    const width = size.width + 2 * PAD;
    const height = size.height + 2 * PAD;
    const spot = place(boxes[index], width, height, taken, frame);
    backing.setAttribute("x", spot.left);
    backing.setAttribute("y", spot.top);
    backing.setAttribute("width", width);
    backing.setAttribute("height", height);
    backing.setAttribute("rx", 2);
    label.setAttribute("x", spot.left + PAD);
    label.setAttribute("y", spot.top + PAD);
    taken.push(spot);
  });
}

for (const image of document.querySelectorAll("img[data-regions]")) {
  const regions = JSON.parse(document.getElementById(image.dataset.regions).textContent);
  if (image.complete && image.naturalWidth) draw(image, regions);
  else image.addEventListener("load", () => draw(image, regions), {once: true});
}
