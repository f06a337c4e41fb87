#!/usr/bin/env bash
# Rebuild the other tools whose output sslperf imports, from the crates sslperf builds their libraries from, and
# capture the outputs kept in tests/data/speed (see its README for what each file is):
#   - BoringSSL's bssl_bench (Google Benchmark JSON), boring-sys 5.4.0;
#   - BoringSSL's `bssl speed` (text and -json), boring-sys 5.0.2, the last crate that carries tool/speed.cc;
#   - wolfSSL's wolfCrypt benchmark (text and -csv), wolfssl-sys 5.3.0;
#   - a Google Benchmark program that is not bssl_bench (scripts/gbench-sample.cc), linked against the Google
#     Benchmark that boring-sys 5.4.0 carries.
# Each crate is checked against the checksum crates.io's index gives. The outputs are measurements: run this on an
# otherwise idle machine. Usage: scripts/capture-import-samples.sh NEW_DIR (it must not exist yet).
set -euo pipefail
out=${1:?usage: $0 NEW_DIR (the outputs are written there; it must not exist yet)}
if [ -e "$out" ]; then
  echo "error: $out exists; give a new directory, so nothing is overwritten." >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs=$(nproc)

fetch() {   # crate version: downloaded, checked and unpacked into $work
  local name=$1 version=$2 prefix cksum
  prefix="${name:0:2}/${name:2:2}"
  cksum=$(timeout 60 curl -fsS "https://index.crates.io/$prefix/$name" |
          python3 -c "import json,sys; print(next(json.loads(l)['cksum'] for l in sys.stdin if json.loads(l)['vers'] == '$version'))")
  timeout 600 curl -fsSL -o "$work/$name-$version.crate" "https://static.crates.io/crates/$name/$name-$version.crate"
  echo "$cksum  $work/$name-$version.crate" | sha256sum -c --quiet
  tar -xzf "$work/$name-$version.crate" -C "$work"
}

fetch boring-sys 5.4.0
fetch boring-sys 5.0.2
fetch wolfssl-sys 5.3.0

echo "== building bssl_bench (boring-sys 5.4.0)"
timeout 3600 cmake -S "$work/boring-sys-5.4.0/deps/boringssl" -B "$work/bssl-bench" -GNinja -DCMAKE_BUILD_TYPE=Release >/dev/null
timeout 3600 ninja -C "$work/bssl-bench" -j"$jobs" bssl_bench >/dev/null
echo "== building bssl (boring-sys 5.0.2)"
timeout 3600 cmake -S "$work/boring-sys-5.0.2/deps/boringssl" -B "$work/bssl" -GNinja -DCMAKE_BUILD_TYPE=Release >/dev/null
timeout 3600 ninja -C "$work/bssl" -j"$jobs" bssl >/dev/null
echo "== building wolfCrypt's benchmark (wolfssl-sys 5.3.0)"
wolf="$work/wolfssl-sys-5.3.0/wolfssl-src"
(cd "$wolf" && timeout 600 sh ./autogen.sh >/dev/null 2>&1 &&
 CFLAGS=-O3 timeout 600 sh ./configure --enable-static --disable-shared --enable-tls13 --enable-curve25519 \
   --enable-ed25519 --enable-aesgcm --enable-chacha --enable-poly1305 --enable-sha3 --enable-sp=yes,4096 \
   --enable-mlkem --enable-mldsa --enable-keygen --enable-sp-asm --enable-intelasm --enable-aesni \
   --disable-examples --enable-crypttests --enable-benchmark >/dev/null &&
 timeout 3600 make -j"$jobs" wolfcrypt/benchmark/benchmark >/dev/null)

echo "== building scripts/gbench-sample.cc"
timeout 600 g++ -O2 -std=c++17 -I "$work/boring-sys-5.4.0/deps/boringssl/third_party/benchmark/include" \
  "$here/gbench-sample.cc" -o "$work/bm_memcpy" "$work/bssl-bench/third_party/benchmark/src/libbenchmark.a" -lpthread

echo "== capturing (each as the tool printed it)"
timeout 600 "$work/bm_memcpy" --benchmark_repetitions=2 --benchmark_min_time=0.05s --benchmark_format=json \
  > "$out/gbench-sample-memcpy.json"
cd "$work/bssl-bench"
filter='^BM_SpeedAEAD/(seal|open)_(aes_128_gcm|chacha20_poly1305)/InputSize:(16|16384)$|^BM_SpeedAEAD/seal_aes_128_gcm/InputSize:16384/IOVecFirst:1456/|^BM_SpeedHash/sha256/InputSize:(16|16384)/|^BM_SpeedECDSA(Sign|Verify)/p256/|^BM_SpeedRSA(Sign|Verify)/2048/|^BM_SpeedCurve25519|^BM_SpeedEd25519(Sign|Verify)/|^BM_SpeedMLKEM768(KeyGenOnly|EncapOnly|DecapOnly)/|^BM_SpeedMLDSA(Sign|Verify)/ml_dsa_65/|^BM_SpeedRSAKeyGen/2048|^BM_SpeedECDHEphemeral/p256/|^BM_SpeedX509/'
timeout 600 ./bssl_bench -t 1 -t 2 --benchmark_filter="$filter" --benchmark_repetitions=3 \
  --benchmark_min_time=0.05s --benchmark_format=json > "$out/gbench-bssl_bench-5.4.0-threads-repetitions.json"
filter='^BM_SpeedAEAD/seal_aes_128_gcm/InputSize:(64|1024)$|^BM_SpeedHash/sha256/InputSize:(64|1024)/|^BM_SpeedSipHash|^BM_SpeedBase64|^BM_SpeedSPAKE2|^BM_SpeedMLKEM768ParseOnly'
timeout 600 ./bssl_bench -i 64 -i 1024 --benchmark_filter="$filter" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_min_time=0.05s --benchmark_format=json \
  > "$out/gbench-bssl_bench-5.4.0-aggregates-input-size.json" 2>&1
cd "$work/bssl"
timeout 600 ./bssl speed -timeout 1 -filter 'AES-128-GCM' -chunks 16,16384 > "$out/bssl-boringssl-5.0.2-aead.txt" 2>&1
timeout 600 ./bssl speed -timeout 1 -filter 'ECDSA P-256' -json > "$out/bssl-boringssl-5.0.2-ecdsa.json" 2>&1
cd "$wolf"
timeout 600 ./wolfcrypt/benchmark/benchmark -aes-gcm -chacha20-poly1305 -sha256 -sha3-256 -hmac-sha256 -rsa -ecc \
  -x25519 -ed25519 -ml-kem-768 -ml-dsa-65 > "$out/wolfcrypt-5.9.4-text.txt" 2>&1
timeout 600 ./wolfcrypt/benchmark/benchmark -base10 -rsa_sign -aes-gcm -sha256 -rsa -ecc 64 \
  > "$out/wolfcrypt-5.9.4-text-base10-64.txt" 2>&1
timeout 600 ./wolfcrypt/benchmark/benchmark -csv -aes-gcm -chacha20-poly1305 -sha256 -sha3-256 -hmac-sha256 -rsa -ecc \
  -x25519 -ed25519 -ml-kem-768 -ml-dsa-65 16384 > "$out/wolfcrypt-5.9.4-csv-16384.csv" 2>&1
ls -l "$out"
