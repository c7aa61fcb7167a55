# frozen_string_literal: true

require "open3"

module LeaseMachinesPackaging
  # What the extension's library may export, on every platform: the init
  # function and what a Ruby extension cannot do without. Everything else is
  # the library's own business; rustc hands the linker a list of these
  # symbols (a version script on Linux, -exported_symbols_list on macOS),
  # and a linker that ignores it exports every global Rust symbol.
  # Standalone (no Rake): the tests load it.
  module LibraryExports
    ALLOWED = [
      # Ruby's require calls it.
      "Init_lease_machines_native",
      # rb-sys defines it, as ruby/internal/abi.h does for a C extension:
      # development builds of Ruby 3.2 and later look it up before
      # Init_lease_machines_native and refuse a library built for another
      # ABI; release builds never look.
      "ruby_abi_version"
    ].freeze
    SHOWN = 5

    module_function

    # The symbols of `exported` that are not ALLOWED; `prefix` is what the
    # platform puts before a C name ("_" on Mach-O).
    def unexpected(exported, prefix: "")
      exported - ALLOWED.map { |name| "#{prefix}#{name}" }
    end

    # A problem naming the unexpected symbols of `exported`, or nil.
    def problem(exported, prefix: "")
      extra = unexpected(exported, prefix: prefix)
      return if extra.empty?

      shown = extra.first(SHOWN).join(", ")
      shown += ", ..." if extra.size > SHOWN
      "exports #{extra.size} symbol#{'s' unless extra.size == 1} besides " \
        "#{ALLOWED.map { |name| "#{prefix}#{name}" }.join(' and ')}: #{shown}"
    end

    # The symbols an ELF shared library exports (its defined dynamic
    # symbols, as `nm -D --defined-only` lists them).
    def elf(path)
      out, err, status = Open3.capture3("nm", "-D", "--defined-only", "--format=posix", path)
      raise "nm -D #{path} failed: #{err.strip}" unless status.success?

      out.lines.map { |line| line.split.first }
    end
  end
end
