// Draws an item's ground-truth regions (quadrilaterals, boxes) over its image, in the image's
// own pixel coordinates: the SVG's viewBox is the image's natural size, so it scales with it.
const SVG = "http://www.w3.org/2000/svg";

function draw(image, regions) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${image.naturalWidth} ${image.naturalHeight}`);
  svg.setAttribute("class", "regions");
  for (const region of regions) {
    const polygon = document.createElementNS(SVG, "polygon");
    polygon.setAttribute("points", region.points.map(([x, y]) => `${x},${y}`).join(" "));
    const title = document.createElementNS(SVG, "title");
    title.textContent = region.label;
    polygon.append(title);
    const [x, y] = region.points[0];
    const label = document.createElementNS(SVG, "text");
    label.setAttribute("x", x);
    label.setAttribute("y", Math.max(y - 4, 12));
    label.textContent = region.label;
    svg.append(polygon, label);
  }
  image.after(svg);
}

for (const image of document.querySelectorAll("img[data-regions]")) {
  const regions = JSON.parse(document.getElementById(image.dataset.regions).textContent);
  if (image.complete && image.naturalWidth) draw(image, regions);
  else image.addEventListener("load", () => draw(image, regions), {once: true});
}
