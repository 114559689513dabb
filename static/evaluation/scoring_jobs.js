// Uploads being scored by a worker: fetch the report's list of them every second and a half, put
// it in place, and reload the page once none is waiting or running (the new rows are then in it).
import {part, poll} from "../js/poll.js";

let section = document.getElementById("scoring-jobs");

function update(html) {
  const fresh = part(html, "scoring-jobs");
  if (!fresh) return false;
  section.replaceWith(fresh);
  section = fresh;
  if (fresh.dataset.running === "1") return true;
  window.location.reload();
  return false;
}

if (section && section.dataset.running === "1") poll(section.dataset.url, {every: 1500, onAnswer: update});
