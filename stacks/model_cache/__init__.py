from stacks.model_cache.stack import ModelCacheStack

__all__ = ["ModelCacheStack"]
