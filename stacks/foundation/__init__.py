from stacks.foundation.stack import FoundationStack

__all__ = ["FoundationStack"]
