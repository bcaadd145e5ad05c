#!/usr/bin/env node
// validate.mjs FILE... — an independent check of WARC files with the npm
// package warcio (not with the Go code that wrote them).
//
// For every file it reads every record with warcio's WARCParser twice:
//   1. parseHttp: false — the raw block, to check WARC-Block-Digest;
//   2. parseHttp: true  — warcio's own split of HTTP headers and payload, to
//      check WARC-Payload-Digest and read the response status.
// warcio.js parses digests but never verifies them, so this script hashes the
// bytes itself (sha1, sha256, sha512 or md5; base16, base32 or base64).
// It also checks: each file begins with a warcinfo record; every record is
// WARC/1.1 with the mandatory fields; each record is its own gzip member
// (members follow each other with no gap up to the end of the file); record
// IDs are unique; WARC-Concurrent-To and WARC-Warcinfo-ID name records that
// exist; WARC-Protocol values are protocol ids, on no warcinfo record;
// a server-not-modified revisit has HTTP headers and no payload
// (nor payload digest); a response record's payload is as long as its
// HTTP Content-Length unless it says WARC-Truncated.
//
// It prints one JSON object on stdout:
//   {"files": N, "records": N, "byType": {"warcinfo": N, ...},
//    "responses": [{"uri", "status", "file", "offset", "length", "payloadDigest",
//                   "date", "truncated", "payloadLength", "payloadSHA256",
//                   "declaredLength", "protocols"}],
//    "revisits": [...], "errors": [...]}
// and exits 1 if there is any error, 2 on bad usage.

import { createHash } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import { WARCParser } from "warcio";

const HASHES = { sha1: "sha1", "sha-1": "sha1", sha256: "sha256", "sha-256": "sha256", sha512: "sha512", "sha-512": "sha512", md5: "md5" };
const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function base32Decode(s) {
  s = s.toUpperCase().replace(/=+$/, "");
  const out = [];
  let bits = 0;
  let value = 0;
  for (const c of s) {
    const i = B32.indexOf(c);
    if (i < 0) return null;
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

// parseDigest turns "sha1:ABC..." into {algo, bytes}, or a string error.
function parseDigest(field) {
  const i = field.indexOf(":");
  if (i < 0) return `digest ${JSON.stringify(field)} has no "algorithm:" prefix`;
  const algo = HASHES[field.slice(0, i).toLowerCase()];
  if (!algo) return `digest ${JSON.stringify(field)}: unsupported algorithm`;
  const value = field.slice(i + 1);
  const size = createHash(algo).digest().length;
  let bytes = null;
  if (value.length === size * 2 && /^[0-9a-fA-F]+$/.test(value)) {
    bytes = Buffer.from(value, "hex");
  } else if (value.replace(/=+$/, "").length === Math.ceil((size * 8) / 5)) {
    bytes = base32Decode(value);
  } else {
    const b = Buffer.from(value, "base64");
    if (b.length === size) bytes = b;
  }
  if (!bytes || bytes.length !== size) return `digest ${JSON.stringify(field)}: value is not ${algo} in base16, base32 or base64`;
  return { algo, bytes };
}

// checkDigest hashes all chunks of reader and compares to the header value.
// It returns the content's length and SHA-256 (hex).
async function checkDigest(reader, field, what, where, errors) {
  const d = field ? parseDigest(field) : null;
  const h = createHash(d && typeof d === "object" ? d.algo : "sha1");
  const sha256 = createHash("sha256");
  let length = 0;
  for await (const chunk of reader) {
    h.update(chunk);
    sha256.update(chunk);
    length += chunk.length;
  }
  const seen = { length, sha256: sha256.digest("hex") };
  if (!field) {
    errors.push(`${where}: missing ${what}`);
  } else if (typeof d === "string") {
    errors.push(`${where}: ${what}: ${d}`);
  } else if (!h.digest().equals(d.bytes)) {
    errors.push(`${where}: ${what} ${field} does not match the content`);
  }
  return seen;
}

// declaredLength is the Content-Length of a response's HTTP headers, or -1
// if there is none or the status has no body (1xx, 204, 304: RFC 9112
// section 6.3).
function declaredLength(http) {
  if (!http) return -1;
  const status = Number(http.statusCode);
  if (status < 200 || status === 204 || status === 304) return -1;
  const v = http.headers.get("Content-Length");
  if (v === null || !/^\s*[0-9]+\s*$/.test(v)) return -1;
  return Number(v);
}

const NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";

const REQUIRED = ["WARC-Record-ID", "WARC-Date", "WARC-Type", "Content-Length"];

async function validateFile(file, report, ids, refs) {
  const errors = report.errors;
  const size = statSync(file).size;

  // Pass 1: raw blocks, framing, headers.
  const pass1 = [];
  {
    const parser = new WARCParser(createReadStream(file), { parseHttp: false });
    let index = 0;
    for await (const record of parser) {
      const type = record.warcType;
      const where = `${file}: record ${index} (${type})`;
      if (record.warcHeaders.statusline !== "WARC/1.1") {
        errors.push(`${where}: version line ${JSON.stringify(record.warcHeaders.statusline)}, want "WARC/1.1"`);
      }
      for (const name of REQUIRED) {
        if (!record.warcHeader(name)) errors.push(`${where}: missing ${name}`);
      }
      if (index === 0 && type !== "warcinfo") errors.push(`${where}: the first record is not warcinfo`);
      const id = record.warcHeader("WARC-Record-ID");
      if (id) {
        if (ids.has(id)) errors.push(`${where}: duplicate WARC-Record-ID ${id}`);
        ids.add(id);
      }
      // WARC-Protocol (the IIPC's extension): one protocol id per field,
      // repeated for layers; never on a warcinfo record. The Headers class
      // joins repeated fields with ", ".
      const protocols = record.warcHeader("WARC-Protocol");
      if (protocols !== null && protocols !== undefined) {
        if (type === "warcinfo") errors.push(`${where}: WARC-Protocol on a warcinfo record`);
        for (const p of protocols.split(", ")) {
          if (!/^[a-z0-9][a-z0-9./-]*$/.test(p)) errors.push(`${where}: WARC-Protocol ${JSON.stringify(p)} is not a protocol id`);
        }
      }
      if (type === "request" || type === "response") {
        for (const name of ["WARC-Target-URI", "WARC-Warcinfo-ID", "WARC-Concurrent-To"]) {
          const v = record.warcHeader(name);
          if (!v) errors.push(`${where}: missing ${name}`);
          else if (name !== "WARC-Target-URI") refs.push({ where, name, id: v });
        }
        const ct = record.warcHeader("Content-Type") || "";
        if (!ct.startsWith(`application/http;msgtype=${type}`)) {
          errors.push(`${where}: Content-Type ${JSON.stringify(ct)}`);
        }
      }
      await checkDigest(record.reader, record.warcHeader("WARC-Block-Digest"), "WARC-Block-Digest", where, errors);
      pass1.push({ type, offset: parser.offset, length: parser.recordLength });
      index++;
    }
  }
  if (pass1.length === 0) errors.push(`${file}: no records`);
  for (let i = 0; i < pass1.length; i++) {
    const end = i + 1 < pass1.length ? pass1[i + 1].offset : size;
    const r = pass1[i];
    if (r.offset + r.length !== end) {
      errors.push(`${file}: record ${i} (${r.type}) at offset ${r.offset} is ${r.length} bytes but the next starts at ${end}: not one gzip member per record`);
    }
  }

  // Pass 2: HTTP parsed by warcio; payload digests and statuses.
  {
    const parser = new WARCParser(createReadStream(file), { parseHttp: true });
    let index = 0;
    for await (const record of parser) {
      const type = record.warcType;
      const where = `${file}: record ${index} (${type})`;
      let payload = { length: 0, sha256: "", truncated: "", declared: -1 };
      if (type === "request" || type === "response") {
        if (!record.httpHeaders) {
          errors.push(`${where}: warcio found no HTTP headers`);
        }
        const seen = await checkDigest(record.reader, record.warcHeader("WARC-Payload-Digest"), "WARC-Payload-Digest", where, errors);
        if (type === "response") {
          // A response record either holds the payload the server sent,
          // whole, or says WARC-Truncated (WARC 1.1 section 5.13): never
          // fewer bytes than its Content-Length under no such field.
          payload = { ...seen, truncated: record.warcHeader("WARC-Truncated") || "", declared: declaredLength(record.httpHeaders) };
          if (payload.declared >= 0 && payload.declared !== payload.length && !payload.truncated) {
            errors.push(`${where}: ${record.warcTargetURI}: ${payload.length} payload bytes under Content-Length ${payload.declared}, and no WARC-Truncated`);
          }
        }
      } else if (type === "revisit" && record.warcHeader("WARC-Profile") === NOT_MODIFIED) {
        // WARC 1.1 section 6.7.3: the server's answer's headers, no
        // payload, so no payload digest.
        if (!record.httpHeaders) errors.push(`${where}: warcio found no HTTP headers`);
        if (record.warcHeader("WARC-Payload-Digest")) errors.push(`${where}: a server-not-modified revisit with a WARC-Payload-Digest`);
        let rest = 0;
        for await (const chunk of record.reader) rest += chunk.length;
        if (rest !== 0) errors.push(`${where}: a server-not-modified revisit with ${rest} bytes of payload`);
      } else {
        await record.skipFully();
      }
      report.records++;
      report.byType[type] = (report.byType[type] || 0) + 1;
      if (type === "response") {
        report.responses.push({
          uri: record.warcTargetURI,
          status: record.httpHeaders ? Number(record.httpHeaders.statusCode) : 0,
          file,
          offset: parser.offset,
          length: parser.recordLength,
          payloadDigest: record.warcHeader("WARC-Payload-Digest") || "",
          date: record.warcDate || "",
          truncated: payload.truncated,
          payloadLength: payload.length,
          payloadSHA256: payload.sha256,
          declaredLength: payload.declared,
          protocols: record.warcHeader("WARC-Protocol") || "",
        });
      }
      if (type === "revisit") {
        report.revisits.push({
          uri: record.warcTargetURI,
          status: record.httpHeaders ? Number(record.httpHeaders.statusCode) : 0,
          profile: record.warcHeader("WARC-Profile") || "",
          refersToURI: record.warcHeader("WARC-Refers-To-Target-URI") || "",
          refersToDate: record.warcHeader("WARC-Refers-To-Date") || "",
          refersTo: record.warcHeader("WARC-Refers-To") || "",
          payloadDigest: record.warcHeader("WARC-Payload-Digest") || "",
          file,
          offset: parser.offset,
          length: parser.recordLength,
        });
      }
      index++;
    }
    if (index !== pass1.length) errors.push(`${file}: ${pass1.length} records raw but ${index} with HTTP parsing`);
  }
}

async function main(files) {
  if (files.length === 0) {
    process.stderr.write("usage: validate.mjs FILE...\n");
    process.exit(2);
  }
  const report = { files: 0, records: 0, byType: {}, responses: [], revisits: [], errors: [] };
  const ids = new Set();
  const refs = [];
  for (const file of files) {
    report.files++;
    try {
      await validateFile(file, report, ids, refs);
    } catch (e) {
      report.errors.push(`${file}: ${e && e.message ? e.message : String(e)}`);
    }
  }
  for (const r of refs) {
    if (!ids.has(r.id)) report.errors.push(`${r.where}: ${r.name} ${r.id} names no record in the files read`);
  }
  process.stdout.write(JSON.stringify(report) + "\n");
  process.exitCode = report.errors.length > 0 ? 1 : 0;
}

await main(process.argv.slice(2));
