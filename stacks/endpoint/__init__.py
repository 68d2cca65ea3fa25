from stacks.endpoint.stack import EndpointStack

__all__ = ["EndpointStack"]
