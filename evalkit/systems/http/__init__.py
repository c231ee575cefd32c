"""A memory system behind evalkit's HTTP contract: the client that evaluates a service
(`client.HttpSystem`, `--system http://…`), the server that serves any system so
(`server`, `evalkit serve`), the operations both share (`operations`) and the wire format of
the contract's bodies (`wire`); beside the contract, an OpenAI-compatible embeddings endpoint
over the run's embedder (`embeddings`, `evalkit serve --embeddings`). Needs the `http` extra."""
