# frozen_string_literal: true

require "minitest/autorun"
require "rbconfig"
require "rubygems/package"
require "tmpdir"
require_relative "../../rakelib/packaging/darwin_check"

# The check of the darwin gems' libraries (rake gem:darwin), run on small
# Mach-O files written here, field by field as <mach-o/loader.h> lays them out,
# so that each rule is seen to pass and to fail without a darwin build; and on
# files that are no Mach-O at all.
class DarwinCheckTest < Minitest::Test
  Check = LeaseMachinesPackaging::DarwinCheck
  MachO = LeaseMachinesPackaging::MachO
  LIBSYSTEM = "/usr/lib/libSystem.B.dylib"
  CPU = { "arm64" => 0x0100000c, "x86_64" => 0x01000007 }.freeze

  # A 64-bit Mach-O with the dylibs, exported symbols and binds given; binds
  # are [symbol, dylib ordinal] (1: the first dylib, -2: flat lookup).
  def macho(cpu: "arm64", filetype: 8, dylibs: [LIBSYSTEM], exports: ["_Init_lease_machines_native"],
            binds: [["_malloc", 1], ["_rb_define_module", -2]], minos: "11.0", min_macos_command: :build_version)
    names = "\0#{exports.map { |name| "#{name}\0" }.join}"
    dylib_commands = dylibs.map do |dylib|
      name = "#{dylib}\0".ljust(((dylib.bytesize + 1 + 7) / 8) * 8, "\0")
      [0xc, 24 + name.bytesize, 24, 2, 0, 0].pack("V6") + name
    end
    bind_stream = "#{bind_opcodes(binds)}\0"
    major, minor = minos.split(".").map(&:to_i)
    # LC_BUILD_VERSION, or before macOS 10.14 LC_VERSION_MIN_MACOSX, or none
    min_macos = {
      build_version: [0x32, 24, 1, (major << 16) | (minor << 8), 0, 0].pack("V6"),
      version_min: [0x24, 16, (major << 16) | (minor << 8), 0].pack("V4"),
      none: "".b
    }.fetch(min_macos_command)
    commands_size = 24 + dylib_commands.sum(&:bytesize) + 48 + min_macos.bytesize
    symoff = 32 + commands_size
    stroff = symoff + (16 * exports.size)
    bindoff = stroff + names.bytesize
    commands = [
      [0x2, 24, symoff, exports.size, stroff, names.bytesize].pack("V6"),
      *dylib_commands,
      [0x80000022, 48, 0, 0, bindoff, bind_stream.bytesize, 0, 0, 0, 0, 0, 0].pack("V12"),
      *([min_macos] unless min_macos.empty?)
    ]
    header = [0xfeedfacf, CPU.fetch(cpu), 0, filetype, commands.size, commands_size, 0, 0].pack("V8")
    offset = 0
    symbols = exports.map do |name|
      [1 + offset, 0x0f, 1, 0, 0x1000].pack("VCCvQ<").tap { offset += name.bytesize + 1 }
    end
    header + commands.join + symbols.join + names + bind_stream
  end

  # BIND_OPCODE_SET_DYLIB_ORDINAL_IMM (or _SPECIAL_IMM), _SET_SYMBOL_TRAILING_FLAGS_IMM,
  # _SET_SEGMENT_AND_OFFSET_ULEB, _DO_BIND, for each symbol.
  def bind_opcodes(binds)
    binds.map do |symbol, ordinal|
      set_ordinal = ordinal.negative? ? 0x30 | (ordinal & 0x0f) : 0x10 | ordinal
      "#{[set_ordinal, 0x40].pack('C2')}#{symbol}\0#{[0x72, 0x00, 0x90].pack('C3')}"
    end.join
  end

  def write(dir, bytes, name = "lease_machines_native.bundle")
    path = File.join(dir, name)
    File.binwrite(path, bytes)
    path
  end

  def problems(bytes, platform = "arm64-darwin", **options)
    Dir.mktmpdir { |dir| Check.library_problems(write(dir, bytes), platform, **options) }
  end

  def test_a_well_formed_bundle_passes_and_is_read_as_written
    assert_equal [], problems(macho, min_macos: "11.0")
    Dir.mktmpdir do |dir|
      file = MachO.new(write(dir, macho))
      assert_equal ["arm64", "bundle", [LIBSYSTEM], "11.0"], [file.cpu, file.file_type, file.dylibs, file.min_macos]
      imports = file.imports.map { |import| [import.name, import.library.to_s] }
      assert_equal [["_malloc", LIBSYSTEM], %w[_rb_define_module flat_lookup]], imports
    end
  end

  def test_a_dylib_passes_as_dlopen_loads_it_too
    assert_equal [], problems(macho(filetype: 6))
  end

  def test_the_wrong_cpu_an_executable_and_an_old_macos_fail
    assert_equal ["CPU is x86_64, not arm64"], problems(macho(cpu: "x86_64"))
    assert_equal ["CPU is arm64, not x86_64"], problems(macho, "x86_64-darwin")
    assert_equal ["file type is executable, not bundle or dylib"], problems(macho(filetype: 2))
    assert_equal ['built for macOS "15.0", not 11.0'], problems(macho(minos: "15.0"), min_macos: "11.0")
    old = macho(cpu: "x86_64", minos: "10.13", min_macos_command: :version_min)
    assert_equal [], problems(old, "x86_64-darwin", min_macos: "10.13")
    assert_equal ["built for macOS nil, not 10.13"],
                 problems(macho(cpu: "x86_64", min_macos_command: :none), "x86_64-darwin", min_macos: "10.13")
  end

  def test_a_bundle_without_the_init_function_fails
    assert_equal ["does not export _Init_lease_machines_native",
                  "exports 1 symbol besides _Init_lease_machines_native and _ruby_abi_version: _Init_other"],
                 problems(macho(exports: ["_Init_other"]))
  end

  # What a linker that ignores rustc's export list leaves (zig's did: 329
  # Rust symbols besides these two).
  def test_a_bundle_exporting_more_than_the_init_function_and_the_abi_version_fails
    assert_equal [], problems(macho(exports: %w[_Init_lease_machines_native _ruby_abi_version]))
    rust = %w[__ZN5bytes5abort17hfa8ed283ea9ad364E _rust_eh_personality]
    assert_equal ["exports 2 symbols besides _Init_lease_machines_native and _ruby_abi_version: #{rust.join(', ')}"],
                 problems(macho(exports: ["_Init_lease_machines_native", *rust]))
    many = (1..7).map { |index| "__RNvCs#{index}_5alloc" }
    assert_equal ["exports 7 symbols besides _Init_lease_machines_native and _ruby_abi_version: " \
                  "#{many.first(5).join(', ')}, ..."],
                 problems(macho(exports: ["_Init_lease_machines_native", *many]))
  end

  def test_only_ruby_api_symbols_may_be_looked_up_at_load_time
    assert_equal ["_getaddrinfo_a is bound to flat_lookup"],
                 problems(macho(binds: [["_rb_define_module", -2], ["_getaddrinfo_a", -2]]))
  end

  def test_a_dylib_other_than_libsystem_fails
    libruby = "/opt/ruby/lib/libruby.3.1.dylib"
    assert_equal ["loads #{libruby}", "_rb_define_module is bound to #{libruby}"],
                 problems(macho(dylibs: [LIBSYSTEM, libruby], binds: [["_malloc", 1], ["_rb_define_module", 2]]))
  end

  def test_a_file_that_is_no_macho_or_is_cut_short_is_refused
    error = assert_raises(MachO::Invalid) { Check.library_problems(RbConfig.ruby, "arm64-darwin") }
    assert_match(/not a 64-bit little-endian Mach-O \(magic 0x464c457f\)/, error.message)
    error = assert_raises(MachO::Invalid) { problems(macho.byteslice(0, 100)) }
    assert_match(/truncated/, error.message)
  end

  def build_gem(dir, files)
    spec = Gem::Specification.new do |s|
      s.name = "lease_machines"
      s.version = "0.0.1"
      s.summary = "darwin check fixture"
      s.authors = ["test"]
      s.license = "MIT"
      s.homepage = "https://example.invalid"
      s.platform = Gem::Platform.new("arm64-darwin")
      s.files = files.keys
    end
    files.each do |file, bytes|
      FileUtils.mkdir_p(File.join(dir, File.dirname(file)))
      File.binwrite(File.join(dir, file), bytes)
    end
    built = Gem::DefaultUserInteraction.use_ui(Gem::SilentUI.new) { Dir.chdir(dir) { Gem::Package.build(spec) } }
    File.join(dir, built)
  end

  def test_a_gem_is_checked_library_by_library_and_for_rust_sources
    Dir.mktmpdir do |dir|
      good = build_gem(File.join(dir, "good"), "lib/lease_machines_native/3.1/lease_machines_native.bundle" => macho,
                                               "lib/lease_machines.rb" => "")
      assert_equal ["3.1"], Check.check_gem(good, min_macos: "11.0")

      bad = build_gem(File.join(dir, "bad"),
                      "lib/lease_machines_native/3.1/lease_machines_native.bundle" => macho(cpu: "x86_64"),
                      "lib/lease_machines_native/3.3/lease_machines_native.bundle" => "\x7fELF",
                      "ext/lease_machines_native/src/lib.rs" => "")
      error = assert_raises(RuntimeError) { Check.check_gem(bad) }
      assert_match(%r{ext/lease_machines_native/src/lib\.rs: a Rust source in the gem}, error.message)
      assert_match(%r{3\.1/lease_machines_native\.bundle: CPU is x86_64, not arm64}, error.message)
      assert_match(%r{3\.3/lease_machines_native\.bundle: .*not a 64-bit little-endian Mach-O}, error.message)
    end
  end
end
