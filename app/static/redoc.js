"use strict";
// ReDoc for /openapi.json, started from this file: the pages' policy runs no inline script.
// The system's own fonts: ReDoc's defaults (Roboto, Montserrat) are web fonts the page would
// have to fetch from elsewhere, and nothing is fetched from elsewhere.
(() => {
  const root = document.getElementById("redoc");
  const sans = 'system-ui, -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif';
  const mono = '"DejaVu Sans Mono", Menlo, Consolas, "Courier New", monospace';
  Redoc.init(
    "/openapi.json",
    {
      // ReDoc writes its styles into <style> elements; the page's policy admits those
      // carrying the nonce of this answer (app/api/docs.py).
      nonce: root.dataset.styleNonce,
      theme: {
        typography: {
          fontFamily: sans,
          headings: { fontFamily: sans },
          code: { fontFamily: mono },
        },
      },
    },
    root,
  );
})();
