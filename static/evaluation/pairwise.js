// The report's table of every pair of rows: while a worker computes it, fetch the fragment every
// few seconds (the server answers 202 until it is there) and put it in place.
import {part, poll} from "../js/poll.js";

const section = document.getElementById("pairwise-section");

function update(html) {
  const fresh = part(html, "pairwise-section");
  if (fresh) section.replaceWith(fresh);
  return false;
}

if (section && section.dataset.state === "computing") poll(section.dataset.url, {every: 3000, onAnswer: update});
