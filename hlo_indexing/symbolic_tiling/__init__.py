"""Symbolic tiling: tiles of tensors as expressions of tile ids and sizes, propagated through HLO ops."""
