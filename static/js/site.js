// What every page does, kept in a file so that the Content-Security-Policy can refuse inline
// scripts and event handlers: the language menu in the header applies a choice at once.
const language = document.querySelector("#language-form select[name=language]");
if (language) language.addEventListener("change", () => language.form.submit());
