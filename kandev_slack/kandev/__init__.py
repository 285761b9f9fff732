"""The Kandev edge: the REST + MCP client (``client.py``), push hints (``hints.py``), the reply →
typed outcome table (``respond.py``), wire models and errors. Import each name from its module."""
