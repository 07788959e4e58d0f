#!/usr/bin/env python3
"""Checks a Home Assistant MQTT device discovery payload for what each platform requires.

Usage: check-discovery.py [FILE]   (reads standard input without FILE)

The broker test runs it on what `mosquitto_sub -C 1 -t homeassistant/device/RIG_NODE/config` reads
back. It expands Home Assistant's abbreviations (the few this project's payloads or a hand-written
one may use) as Home Assistant does, then checks the table below. Exit status 0: all there;
1: the problems are listed, one a line; 2: the input is not a JSON object.

The table follows the platforms' configuration pages (fields marked required) and the device
discovery schema:
  https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload
  https://www.home-assistant.io/integrations/event.mqtt/
  https://www.home-assistant.io/integrations/device_trigger.mqtt/
  https://www.home-assistant.io/integrations/button.mqtt/
  https://www.home-assistant.io/integrations/number.mqtt/
  https://www.home-assistant.io/integrations/select.mqtt/
  https://www.home-assistant.io/integrations/sensor.mqtt/
  https://www.home-assistant.io/integrations/image.mqtt/
Tests/ShutterServiceTests/HomeAssistantDiscoveryTests.swift keeps the same table.
"""

import json
import re
import sys

# Each platform's required fields; a tuple is "one of these".
REQUIRED = {
    "event": ["state_topic", "event_types", "unique_id"],
    "device_automation": ["automation_type", "topic", "type", "subtype"],
    "button": ["command_topic", "unique_id"],
    "number": ["command_topic", "unique_id"],
    "select": ["command_topic", "options", "unique_id"],
    "sensor": ["state_topic", "unique_id"],
    "image": [("url_topic", "image_topic"), "unique_id"],
}
# Platforms that are entities: Home Assistant marks them unavailable from the availability topic.
ENTITIES = set(REQUIRED) - {"device_automation"}

ROOT_ABBREVIATIONS = {"dev": "device", "o": "origin", "cmps": "components"}
DEVICE_ABBREVIATIONS = {"ids": "identifiers", "cns": "connections", "mf": "manufacturer", "mdl": "model",
                        "sw": "sw_version", "hw": "hw_version", "sa": "suggested_area", "cu": "configuration_url"}
ORIGIN_ABBREVIATIONS = {"sw": "sw_version", "url": "support_url"}
COMPONENT_ABBREVIATIONS = {
    "p": "platform", "uniq_id": "unique_id", "stat_t": "state_topic", "cmd_t": "command_topic",
    "cmd_tpl": "command_template", "val_tpl": "value_template", "avty_t": "availability_topic",
    "avty": "availability", "pl_avail": "payload_available", "pl_not_avail": "payload_not_available",
    "atype": "automation_type", "t": "topic", "pl": "payload", "stype": "subtype", "evt_typ": "event_types",
    "ops": "options", "pl_prs": "payload_press", "url_t": "url_topic", "url_tpl": "url_template",
    "stat_cla": "state_class", "ent_cat": "entity_category", "dev_cla": "device_class",
    "unit_of_meas": "unit_of_measurement",
}
# Home Assistant's valid_entity_id: DOMAIN.OBJECT_ID, lower case, digits and single underscores inside.
ENTITY_ID = re.compile(r"^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$")

# Options a component inherits from the message's root when it does not set them itself.
SHARED = ["availability", "availability_mode", "availability_template", "availability_topic",
          "command_topic", "payload_available", "payload_not_available", "state_topic"]


def expand(mapping, abbreviations):
    return {abbreviations.get(key, key): value for key, value in mapping.items()}


def problems(payload):
    found = []
    if not isinstance(payload, dict):
        return ["the payload is not a JSON object"]
    root = expand(payload, {**ROOT_ABBREVIATIONS, **COMPONENT_ABBREVIATIONS})
    device = root.get("device")
    if not isinstance(device, dict):
        found.append("device (dev): missing")
    else:
        device = expand(device, DEVICE_ABBREVIATIONS)
        if not device.get("identifiers") and not device.get("connections"):
            found.append("device (dev): needs identifiers (ids) or connections (cns)")
        url = device.get("configuration_url")
        if url is not None and not str(url).startswith(("http://", "https://", "homeassistant://")):
            found.append(f"device (dev): configuration_url {url!r} is not an http(s) address")
    origin = root.get("origin")
    if not isinstance(origin, dict) or not expand(origin, ORIGIN_ABBREVIATIONS).get("name"):
        found.append("origin (o): missing, or without name")
    components = root.get("components")
    if not isinstance(components, dict) or not components:
        found.append("components (cmps): missing or empty")
        return found
    unique_ids = {}
    for component_id, raw in sorted(components.items()):
        if not isinstance(raw, dict):
            found.append(f"{component_id}: not an object")
            continue
        component = expand(raw, COMPONENT_ABBREVIATIONS)
        for option in SHARED:
            if option in root and option not in component:
                component[option] = root[option]
        platform = component.get("platform")
        if platform not in REQUIRED:
            found.append(f"{component_id}: platform (p) {platform!r} is not one of {sorted(REQUIRED)}")
            continue
        for field in REQUIRED[platform]:
            choices = field if isinstance(field, tuple) else (field,)
            if not any(component.get(choice) not in (None, "", []) for choice in choices):
                found.append(f"{component_id} ({platform}): missing {' or '.join(choices)}")
        if platform == "device_automation" and component.get("automation_type") not in (None, "trigger"):
            found.append(f"{component_id}: automation_type must be 'trigger'")
        if platform == "number":
            step = component.get("step", 1)
            if not isinstance(step, (int, float)) or step < 0.001:
                found.append(f"{component_id} (number): step {step!r} is below 0.001")
            low, high = component.get("min", 1), component.get("max", 100)
            if not (isinstance(low, (int, float)) and isinstance(high, (int, float)) and low < high):
                found.append(f"{component_id} (number): min {low!r} is not below max {high!r}")
        if platform == "select":
            options = component.get("options")
            if not isinstance(options, list) or not all(isinstance(o, str) for o in options) or len(set(options)) != len(options or []):
                found.append(f"{component_id} (select): options must be distinct strings")
        if platform == "event":
            types = component.get("event_types")
            if not isinstance(types, list) or not types:
                found.append(f"{component_id} (event): event_types must be a non-empty list")
        entity_id = component.get("default_entity_id")
        if entity_id is not None and (not isinstance(entity_id, str) or not ENTITY_ID.match(entity_id)
                                      or not entity_id.startswith(platform + ".")):
            found.append(f"{component_id} ({platform}): default_entity_id {entity_id!r} is not a valid {platform}.OBJECT_ID")
        if platform in ENTITIES:
            unique_id = component.get("unique_id")
            if unique_id in unique_ids:
                found.append(f"{component_id}: unique_id {unique_id!r} is also {unique_ids[unique_id]}'s")
            unique_ids[unique_id] = component_id
            if not component.get("availability_topic") and not component.get("availability"):
                found.append(f"{component_id} ({platform}): no availability topic")
    return found


def main():
    if len(sys.argv) > 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    text = open(sys.argv[1], encoding="utf-8").read() if len(sys.argv) == 2 else sys.stdin.read()
    try:
        payload = json.loads(text)
    except ValueError as error:
        print(f"not JSON: {error}", file=sys.stderr)
        return 2
    if not isinstance(payload, dict):
        print("not a JSON object", file=sys.stderr)
        return 2
    found = problems(payload)
    for problem in found:
        print(problem)
    if not found:
        count = len(payload.get("cmps", payload.get("components", {})))
        print(f"ok: {count} components")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
