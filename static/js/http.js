// The one way a page sends JSON to the server: POST with Django's CSRF token, never throwing.
// The answer is {ok, status, payload, json}: status 0 when the server could not be reached,
// payload the parsed JSON answer ({} when it was none; json says whether it was).

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  if (match) return decodeURIComponent(match[1]);
  const field = document.querySelector("input[name=csrfmiddlewaretoken]");
  return field ? field.value : "";
}

export async function post(url, body, { keepalive = false } = {}) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body),
      credentials: "same-origin",
      keepalive,
    });
  } catch {
    return { ok: false, status: 0, payload: {}, json: false };
  }
  let payload = {};
  let json = true;
  try {
    payload = await response.json();
  } catch {
    json = false;
  }
  return { ok: response.ok, status: response.status, payload, json };
}
