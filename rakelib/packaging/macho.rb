# frozen_string_literal: true

module LeaseMachinesPackaging
  # A reader of 64-bit little-endian Mach-O files (arm64 and x86_64 macOS), for
  # the check of the darwin gems' libraries (darwin_check.rb), which are built
  # here but can only be loaded on a Mac. Standalone (no Rake): the tests load
  # it. What it reads, from <mach-o/loader.h> and <mach-o/nlist.h>: the
  # header, the load commands naming dylibs and the oldest macOS, the symbols
  # defined (symbol table) and what dyld binds each imported symbol to (the
  # bind opcodes of LC_DYLD_INFO).
  class MachO
    class Invalid < StandardError; end

    MH_MAGIC_64 = 0xfeedfacf
    CPU_TYPES = { 0x0100000c => "arm64", 0x01000007 => "x86_64" }.freeze
    FILE_TYPES = { 1 => "object", 2 => "executable", 6 => "dylib", 8 => "bundle" }.freeze
    LC_SYMTAB = 0x2
    # The load commands whose dylib the file binds symbols to, in ordinal order.
    DYLIB_COMMANDS = [0xc, 0x80000018, 0x8000001f, 0x20, 0x80000023].freeze
    # The oldest macOS: LC_BUILD_VERSION (minos at +12), or before macOS
    # 10.14 LC_VERSION_MIN_MACOSX (version at +8).
    MIN_MACOS_COMMANDS = { 0x32 => 12, 0x24 => 8 }.freeze
    LC_DYLD_INFO = [0x22, 0x80000022].freeze
    LC_DYLD_CHAINED_FIXUPS = 0x80000034
    N_STAB = 0xe0
    N_TYPE = 0x0e
    N_EXT = 0x01
    N_SECT = 0xe
    # The special dylib ordinal of a symbol looked up at load time in every
    # image loaded (flat namespace; what -undefined dynamic_lookup binds to).
    BIND_FLAT_LOOKUP = -2

    # A symbol bound at load time and where dyld looks for it: a dylib's
    # path, :flat_lookup, or a description of another special ordinal.
    Import = Struct.new(:name, :library, keyword_init: true)

    attr_reader :path, :cpu, :file_type, :dylibs, :min_macos, :exported, :imports

    def initialize(path)
      @path = path
      @data = File.binread(path)
      read_header
      read_load_commands
    end

    private

    def bytes(offset, length)
      raise Invalid, "#{path}: truncated (#{length} bytes at #{offset}, file has #{@data.bytesize})" if
        offset + length > @data.bytesize

      @data.byteslice(offset, length)
    end

    def read_header
      magic = @data.byteslice(0, 4).to_s.ljust(4, "\0").unpack1("V")
      raise Invalid, format("%<path>s: not a 64-bit little-endian Mach-O (magic 0x%<magic>08x)", path:, magic:) unless
        magic == MH_MAGIC_64

      cputype, _subtype, filetype, @ncmds = bytes(4, 16).unpack("V4")
      @cpu = CPU_TYPES.fetch(cputype) { format("cputype 0x%08x", cputype) }
      @file_type = FILE_TYPES.fetch(filetype) { "filetype #{filetype}" }
    end

    def read_load_commands
      @dylibs = []
      @binds = []
      offset = 32
      @ncmds.times do
        cmd, size = bytes(offset, 8).unpack("V2")
        raise Invalid, "#{path}: load command at #{offset} has size #{size}" if size < 8

        read_command(cmd, offset, size)
        offset += size
      end
      raise Invalid, "#{path}: no symbol table (LC_SYMTAB)" unless @exported
      raise Invalid, "#{path}: no binding information (LC_DYLD_INFO)" if @binds.empty?

      # Bound after every command is read: ordinals index the dylibs in order.
      @imports = @binds.flat_map { |offset_and_size| read_binds(*offset_and_size) }.uniq
    end

    def read_command(cmd, offset, size)
      if DYLIB_COMMANDS.include?(cmd)
        name_offset = bytes(offset + 8, 4).unpack1("V")
        @dylibs << bytes(offset + name_offset, size - name_offset).unpack1("Z*")
      elsif MIN_MACOS_COMMANDS.key?(cmd)
        minos = bytes(offset + MIN_MACOS_COMMANDS.fetch(cmd), 4).unpack1("V")
        @min_macos = [minos >> 16, (minos >> 8) & 0xff, minos & 0xff].join(".").delete_suffix(".0")
      elsif cmd == LC_SYMTAB
        read_exports(*bytes(offset + 8, 16).unpack("V4"))
      elsif LC_DYLD_INFO.include?(cmd)
        # bind and lazy bind (offset, size); weak binds name no dylib.
        info = bytes(offset + 8, 40).unpack("V10")
        @binds = [info[2, 2], info[6, 2]]
      elsif cmd == LC_DYLD_CHAINED_FIXUPS
        raise Invalid, "#{path}: chained fixups (macOS 12 or newer only) are not read here"
      end
    end

    # The external symbols the file defines.
    def read_exports(symoff, nsyms, stroff, strsize)
      strings = bytes(stroff, strsize)
      @exported = (0...nsyms).filter_map do |index|
        strx, type = bytes(symoff + (16 * index), 5).unpack("VC")
        strings.byteslice(strx..).unpack1("Z*") if type.nobits?(N_STAB) && type.allbits?(N_EXT) && (type & N_TYPE) == N_SECT
      end
    end

    # The symbols a bind opcode stream binds, each with its dylib (what dyld
    # reads; <mach-o/loader.h>, BIND_OPCODE_*). Only the opcodes that set the
    # symbol and the ordinal matter here; the others' operands are skipped.
    def read_binds(offset, size)
      @stream = bytes(offset, size)
      @position = 0
      ordinal = 0
      name = nil
      imports = []
      while @position < @stream.bytesize
        byte = @stream.getbyte(@position)
        @position += 1
        opcode = byte & 0xf0
        immediate = byte & 0x0f
        case opcode
        when 0x10 then ordinal = immediate
        when 0x20 then ordinal = uleb
        when 0x30 then ordinal = immediate.zero? ? 0 : immediate - 16
        when 0x40
          name = @stream.byteslice(@position..).unpack1("Z*")
          @position += name.bytesize + 1
        when 0x60, 0x70, 0x80, 0xa0 then uleb
        when 0x90, 0xb0 then nil
        when 0xc0 then 2.times { uleb }
        when 0x00, 0x50 then next
        else raise Invalid, format("%<path>s: bind opcode 0x%<byte>02x not read here", path: path, byte: byte)
        end
        imports << Import.new(name: name, library: library(ordinal)) if [0x90, 0xa0, 0xb0, 0xc0].include?(opcode)
      end
      imports
    end

    # An unsigned LEB128 number at the read position of the bind stream (signed
    # addends are skipped the same way: only their length matters here).
    def uleb
      value = 0
      shift = 0
      loop do
        byte = @stream.getbyte(@position) or raise Invalid, "#{path}: bind opcodes end inside a number"
        @position += 1
        value |= (byte & 0x7f) << shift
        shift += 7
        return value if byte < 0x80
      end
    end

    def library(ordinal)
      return :flat_lookup if ordinal == BIND_FLAT_LOOKUP
      return "special dylib ordinal #{ordinal}" if ordinal <= 0

      @dylibs.fetch(ordinal - 1) { "dylib ordinal #{ordinal} (the file loads #{@dylibs.size})" }
    end
  end
end
