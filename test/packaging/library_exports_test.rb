# frozen_string_literal: true

require "minitest/autorun"
require "open3"
require "rbconfig"
require "shellwords"
require "tmpdir"
require_relative "../../rakelib/packaging/library_exports"

# The extension's library exports its init function and ruby_abi_version
# alone: the library `rake compile` built (on Linux, where GNU ld reads
# rustc's version script), and the rule itself on a shared library written
# here that exports more. The darwin libraries are held to the same rule by
# DarwinCheck (test/packaging/darwin_check_test.rb).
class LibraryExportsTest < Minitest::Test
  Exports = LeaseMachinesPackaging::LibraryExports
  ROOT = File.expand_path("../..", __dir__)
  BUILT = File.join(ROOT, "lib", "lease_machines_native", "lease_machines_native.#{RbConfig::CONFIG.fetch('DLEXT')}")

  def elf?
    RbConfig::CONFIG.fetch("host_os").include?("linux")
  end

  def test_the_built_library_exports_its_init_function_and_the_abi_version_alone
    skip "ELF libraries only (nm -D)" unless elf?

    exported = Exports.elf(BUILT)
    assert_includes exported, "Init_lease_machines_native"
    assert_nil Exports.problem(exported)
  end

  def test_a_library_exporting_more_fails
    skip "ELF libraries only (nm -D)" unless elf?

    Dir.mktmpdir do |dir|
      source = File.join(dir, "lib.c")
      File.write(source, <<~C)
        void Init_lease_machines_native(void) {}
        unsigned long long ruby_abi_version(void) { return 0; }
        int rust_eh_personality(void) { return 0; }
        static int hidden(void) { return 1; }
        int uses_hidden(void) { return hidden(); }
      C
      library = File.join(dir, "lib.so")
      _, err, status = Open3.capture3(*Shellwords.split(RbConfig::CONFIG.fetch("CC")), "-shared", "-fPIC", "-o", library, source)
      assert status.success?, err

      assert_equal %w[rust_eh_personality uses_hidden], Exports.unexpected(Exports.elf(library)).sort
      assert_match(/\Aexports 2 symbols besides Init_lease_machines_native and ruby_abi_version: /,
                   Exports.problem(Exports.elf(library)))
    end
  end

  def test_mach_o_names_carry_an_underscore
    assert_nil Exports.problem(%w[_Init_lease_machines_native], prefix: "_")
    assert_equal ["Init_lease_machines_native"], Exports.unexpected(%w[Init_lease_machines_native], prefix: "_")
  end
end
