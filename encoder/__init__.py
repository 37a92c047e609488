"""The SASS ISA layer: instruction model, nvdisasm text, bit-exact encoding, cubin files."""
