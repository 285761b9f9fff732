"""Repositories of durable work shared by replicas: the outbox, submissions and channel pace."""
