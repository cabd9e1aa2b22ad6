"""The ops catalog's interpreter, shared by every rule that rewrites a call through the
catalog (KM201, KM108, KM203...): bind a call's arguments to the TensorFlow signature of
its entry (``binding``), translate argument values (``translators``), check the entry's
conditions and build the edit plan (``plan``, ``builders``), and the rule base that
dispatches on the catalog's symbols (``catalog_rule``). The catalog itself is data
(:mod:`kmigrate.rules.ops_catalog`)."""
