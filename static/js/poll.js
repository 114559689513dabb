// The one poller of the pages that follow work a worker does (an import, an upload being scored,
// a model run, the report's table of every pair, a study's progress): fetch a URL every so often
// and hand each answer to the page, which says whether to go on.
//
// A failed fetch (the server restarting) is tried again; an answer of 202 means "not yet"; any
// other answer that is not OK ends the polling, leaving the page as it was.

//: The statuses of a job that has not ended (jobs.models.ACTIVE) and the words for every status.
export const ACTIVE = new Set(["queued", "running"]);
export const STATUS_WORDS = {
  queued: gettext("Waiting for a worker"),
  running: gettext("Running"),
  succeeded: gettext("Succeeded"),
  failed: gettext("Failed"),
  cancelled: gettext("Cancelled"),
};

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// poll(url, {every, first, json, whileHidden, onAnswer}): onAnswer(body) returns true to go on
// polling; with whileHidden false, nothing is fetched while the page's tab is hidden.
export async function poll(url, {every = 1000, first = every, json = false, whileHidden = true, onAnswer}) {
  let delay = first;
  for (;;) {
    await pause(delay);
    delay = every;
    if (!whileHidden && document.hidden) continue;
    let response;
    try {
      response = await fetch(url, {
        credentials: "same-origin",
        headers: {Accept: json ? "application/json" : "text/html"},
      });
    } catch {
      continue;
    }
    if (response.status === 202) continue;
    if (!response.ok) return;
    const body = json ? await response.json() : await response.text();
    if (!(await onAnswer(body))) return;
  }
}

// The element with this id in an HTML fragment the server answered (null when absent).
export function part(html, id) {
  const holder = document.createElement("template");
  holder.innerHTML = html;
  return holder.content.getElementById(id);
}
