"""The item kinds (question bundles, approvals), each a package owning what differs by kind,
behind one registry (:mod:`kandev_slack.kinds.registry`): code elsewhere asks
``spec_of(card).<operation>`` instead of checking which kind it holds (CONTRIBUTING, "Adding an
item kind")."""
