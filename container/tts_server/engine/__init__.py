"""Text -> audio: segmentation, G2P, acoustic backend, alignment."""
