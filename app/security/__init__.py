"""Who may do what (``app.security.authentication``: sign-in tokens, roles, the dependencies
routers declare) and the headers every response carries (``app.security.headers``)."""
