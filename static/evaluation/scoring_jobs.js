// Uploads being scored by a worker: fetch the report's list of them every second and a half, put
// it in place, and reload the page once none is waiting or running (the new rows are then in it).
const DELAY_MS = 1500;

async function follow(section) {
  const url = section.dataset.url;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
    let response;
    try {
      response = await fetch(url, {credentials: "same-origin"});
    } catch {
      continue; // the server restarting: try again
    }
    if (!response.ok) return;
    const holder = document.createElement("div");
    holder.innerHTML = await response.text();
    const fresh = holder.querySelector("#scoring-jobs");
    if (!fresh) return;
    section.replaceWith(fresh);
    section = fresh;
    if (fresh.dataset.running !== "1") {
      window.location.reload();
      return;
    }
  }
}

const section = document.getElementById("scoring-jobs");
if (section && section.dataset.running === "1") follow(section);
