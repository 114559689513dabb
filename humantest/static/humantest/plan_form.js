// The test-plan form offers only the chosen dataset's benchmark's settings and balancing: every
// option names its benchmark in data-benchmark (and data-setting, the setting it needs, if any);
// the others are hidden and disabled. A field left with one choice is hidden, that choice taken.
// The server refuses the others anyway (humantest/plans.py), naming what to choose instead.
const form = document.getElementById("plan-form");
const dataset = form.querySelector("#id_dataset");
const setting = form.querySelector("#id_setting");
const balance = form.querySelector("#id_balance_by");

// Show the options `offered(option)` accepts; keep the selected value if it is still offered
// (the first offered option with that value: "" is an option of several benchmarks), else the
// first offered option. Returns how many are offered.
function offer(select, offered) {
  const wanted = select.value;
  let keep = null;
  let first = null;
  let count = 0;
  for (const option of select.options) {
    const shown = offered(option);
    option.hidden = option.disabled = !shown;
    if (!shown) continue;
    count += 1;
    first ??= option;
    if (keep === null && option.value === wanted) keep = option;
  }
  for (const group of select.querySelectorAll("optgroup")) {
    group.hidden = [...group.children].every((option) => option.hidden);
  }
  const chosen = keep ?? first;
  if (chosen) chosen.selected = true;
  return count;
}

function refresh() {
  const chosen = dataset.selectedOptions[0];
  const benchmark = (chosen && chosen.dataset.benchmark) || null;
  const settings = offer(setting, (option) => option.dataset.benchmark === benchmark);
  setting.closest(".field").hidden = settings < 2;
  const ways = offer(
    balance,
    (option) =>
      !option.dataset.benchmark ||
      (option.dataset.benchmark === benchmark && (!option.dataset.setting || option.dataset.setting === setting.value)),
  );
  balance.closest(".field").hidden = ways < 2;
}

dataset.addEventListener("change", refresh);
setting.addEventListener("change", refresh);
refresh();

// The power card computes in place (the plan's form keeps what was typed), and offers the model
// rows of the chosen dataset's report as the model's accuracy.
const power = document.getElementById("power-form");
const result = document.getElementById("power-result");
const rows = document.getElementById("power-model-row");
let latest = 0; // an answer to an older request (another dataset) must not overwrite a newer one

async function computePower(event) {
  if (event) event.preventDefault();
  const asked = ++latest;
  const query = new URLSearchParams(new FormData(power));
  query.set("format", "json");
  query.set("dataset", dataset.value || "");
  const response = await fetch(`${window.location.pathname}?${query}`, { headers: { Accept: "application/json" } });
  if (!response.ok) return;
  const answer = await response.json();
  if (asked !== latest) return;
  if (event) {
    result.className = answer.error ? "error" : "";
    if (answer.error) result.textContent = answer.error;
    else if (answer.units) {
      result.textContent = interpolate(
        gettext("%(units)s items answered by both people and the model; with %(per_tester)s items per tester and each item answered once, %(testers)s testers."),
        { units: answer.units, per_tester: answer.values.per_tester, testers: answer.testers },
        true,
      );
    }
  }
  const keep = rows.value;
  rows.replaceChildren(new Option("–", ""));
  for (const row of answer.models) {
    const option = new Option(row.label, row.label); // labels are unique; accuracies may repeat
    option.dataset.accuracy = String(row.accuracy);
    rows.append(option);
  }
  rows.value = [...rows.options].some((option) => option.value === keep) ? keep : "";
  rows.closest("label").hidden = answer.models.length === 0;
}

power.addEventListener("submit", computePower);
rows.addEventListener("change", () => {
  const chosen = rows.selectedOptions[0];
  if (chosen && chosen.dataset.accuracy) power.elements.model.value = chosen.dataset.accuracy;
});
dataset.addEventListener("change", () => computePower(null));
computePower(null);
