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
