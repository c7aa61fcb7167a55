# frozen_string_literal: true

module LeaseMachines
  # The gem's version; the core crate and the extension crate carry the same one.
  VERSION = "0.4.0"
end
