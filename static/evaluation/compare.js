// Two rows being compared by a worker: fetch the page every two seconds and put the comparison
// in place once it is no longer being computed.
import {part, poll} from "../js/poll.js";

const section = document.getElementById("comparison-section");

function update(html) {
  const fresh = part(html, "comparison-section");
  if (!fresh) return false;
  if (fresh.dataset.state === "computing") return true;
  section.replaceWith(fresh);
  return false;
}

if (section && section.dataset.state === "computing") poll(section.dataset.url, {every: 2000, onAnswer: update});
