"use strict";
// Swagger UI for /openapi.json, started from this file: the pages' policy runs no inline
// script. Everything it loads is the application's own (app/static/vendor/swagger_ui).
(() => {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    // The validator badge would send the description to validator.swagger.io: never.
    validatorUrl: null,
    oauth2RedirectUrl: `${window.location.origin}/docs/oauth2-redirect`,
  });
})();
