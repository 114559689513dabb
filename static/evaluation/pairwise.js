// The report's table of every pair of rows: while a worker computes it, fetch the fragment every
// few seconds and put it in place once the server answers 200 instead of 202.
const DELAY_MS = 3000;

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
    if (response.status === 202) continue;
    if (!response.ok) return;
    const holder = document.createElement("div");
    holder.innerHTML = await response.text();
    const fresh = holder.querySelector("#pairwise-section");
    if (fresh) section.replaceWith(fresh);
    return;
  }
}

const section = document.getElementById("pairwise-section");
if (section && section.dataset.state === "computing") follow(section);
