// The panel's colour theme, set on <html data-theme> before the page is first drawn (a classic
// script in <head>, so a dark screen does not flash light). The system's choice
// (prefers-color-scheme) applies, and follows the system while it changes, until the person
// picks one with the toggle: that choice is kept in localStorage and overrides the system's.
(() => {
  const KEY = "taskloom.theme";
  const system = matchMedia("(prefers-color-scheme: dark)");
  // A browser that refuses this site's data (cookies and site data blocked) throws on any use
  // of localStorage: the choice then lasts as long as the page.
  let kept = null;
  const read = () => {
    try {
      return localStorage.getItem(KEY);
    } catch {
      return kept;
    }
  };
  const write = (value) => {
    kept = value;
    try {
      localStorage.setItem(KEY, value);
    } catch {
      // kept for this page only
    }
  };
  const chosen = () => {
    const value = read();
    return value === "dark" || value === "light" ? value : null;
  };
  const root = document.documentElement;

  function apply() {
    const theme = chosen() || (system.matches ? "dark" : "light");
    root.dataset.theme = theme;
    const toggle = document.getElementById("theme");
    if (toggle) toggle.setAttribute("aria-pressed", String(theme === "dark"));
  }

  apply();
  system.addEventListener("change", apply);
  // Another tab's choice applies here too.
  addEventListener("storage", (event) => { if (event.key === KEY) apply(); });
  document.addEventListener("DOMContentLoaded", () => {
    document.getElementById("theme").addEventListener("click", () => {
      write(root.dataset.theme === "dark" ? "light" : "dark");
      apply();
    });
    apply();
  });
})();
