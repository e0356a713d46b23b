"""OpenAI embeddings (text-embedding-3-small by default) through the official client.

Honours OPENAI_BASE_URL, so any OpenAI-compatible server (Ollama, vLLM, LM Studio) works.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from hippo.embed.base import Embedder
from hippo.errors import ConfigError, ProviderError, scrub

if TYPE_CHECKING:
    import numpy as np

    from hippo.config import Settings


class OpenAIEmbedder(Embedder):
    name = "openai"
    remote = True

    def __init__(self, model: str = "text-embedding-3-small", dimensions: int = 1536,
                 timeout: float = 30.0) -> None:
        self.model = model
        self.model_id = f"openai:{model}"
        self.dimensions = dimensions
        self.timeout = timeout

    @classmethod
    def from_settings(cls, settings: Settings | None) -> OpenAIEmbedder:
        if settings is None:
            return cls()
        return cls(settings["openai_embed_model"], int(settings["openai_embed_dimensions"]))

    @cached_property
    def _client(self) -> Any:
        if not os.environ.get("OPENAI_API_KEY"):
            raise ConfigError("OPENAI_API_KEY is not set; export it or choose --embedder local")
        import openai

        return openai.OpenAI(timeout=self.timeout, max_retries=1)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np
        import openai

        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), 512):
            part = list(texts[start : start + 512])
            kwargs: dict[str, Any] = {"model": self.model, "input": part}
            if self.model.startswith("text-embedding-3"):
                kwargs["dimensions"] = self.dimensions
            try:
                resp = self._client.embeddings.create(**kwargs)
            except openai.APIError as exc:
                raise ProviderError(scrub(f"openai embeddings failed: {exc}")) from exc
            for item in resp.data:
                vec = np.asarray(item.embedding, dtype=np.float32)
                if vec.shape[0] != self.dimensions:
                    raise ConfigError(
                        f"openai model {self.model} returned {vec.shape[0]} dimensions, "
                        f"expected {self.dimensions}; set openai_embed_dimensions"
                    )
                out[start + item.index] = vec / max(float(np.linalg.norm(vec)), 1e-12)
        return out
