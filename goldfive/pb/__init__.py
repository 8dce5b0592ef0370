"""Generated protobuf code. Never edit; run scripts/gen_proto.py."""
