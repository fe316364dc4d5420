"""One module per stage of the data flow; each stage is a small class with one run().

    ingest -> [exact] -> [minhash] -> tokenize -> build -> repeats -> remove -> export

A stage reads the work folder, writes its artifacts atomically, records itself in the
`stages` table under a key made from the configuration it depends on, and is skipped when
a record with the same key says it is done and its files still check out.
"""
