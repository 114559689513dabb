// The run form offers only the chosen dataset's benchmark's baselines and settings.
const datasets = JSON.parse(document.getElementById("run-datasets").textContent);
const datasetSelect = document.getElementById("id_dataset");
const baselineSelect = document.getElementById("id_baseline");
const settingSelect = document.getElementById("id_setting");
const checkpointField = document.getElementById("field-checkpoint");
const servedFields = document.querySelectorAll("[data-served-field]");
const protocolSelect = document.getElementById("id_protocol");
const rows = document.querySelectorAll("#baselines tbody tr");

function refresh() {
  const chosen = datasets[datasetSelect.value];
  const benchmark = chosen ? chosen.benchmark : null;
  let firstVisible = null;
  for (const option of baselineSelect.options) {
    option.hidden = option.disabled = benchmark !== null && option.dataset.benchmark !== benchmark;
    if (!option.hidden && firstVisible === null) firstVisible = option;
  }
  const selected = baselineSelect.selectedOptions[0];
  if ((!selected || selected.hidden) && firstVisible) firstVisible.selected = true;
  for (const row of rows) row.hidden = benchmark !== null && row.dataset.benchmark !== benchmark;
  const wanted = settingSelect.value || settingSelect.dataset.value;
  settingSelect.replaceChildren(...(chosen ? chosen.settings : []).map(([value, label]) => {
    const option = new Option(label, value, false, value === wanted);
    return option;
  }));
  settingSelect.closest(".field").hidden = !chosen || chosen.settings.length < 2;
  const model = baselineSelect.selectedOptions[0];
  const learned = model && model.dataset.learned === "1";
  checkpointField.hidden = !(model && model.dataset.checkpoint === "1");
  // Empty batch size: the model's own, shown as the placeholder.
  document.getElementById("id_batch_size").placeholder = model ? model.dataset.batchSize : "";
  document.getElementById("id_device").closest(".field").hidden = !learned;
  // A served model's endpoint and request settings; the token limit is the OpenAI protocol's.
  const served = model && model.dataset.served === "1";
  for (const field of servedFields) field.hidden = !served;
  if (served && protocolSelect.value !== "openai") document.getElementById("field-max_tokens").hidden = true;
}

datasetSelect.addEventListener("change", refresh);
baselineSelect.addEventListener("change", refresh);
protocolSelect.addEventListener("change", refresh);
refresh();
