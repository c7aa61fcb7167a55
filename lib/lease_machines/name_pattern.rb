# frozen_string_literal: true

module LeaseMachines
  # A glob over resource names, as operators type them (`status --match`,
  # the web UI's filter): `*` matches any characters, also `.`, `/` and `:`;
  # `?` one; `[...]` a class; `{a,b}` alternatives. Matching only: nothing
  # of it reaches a database.
  class NamePattern
    # fnmatch flags: braces, and `*` across every separator and leading dot.
    FLAGS = File::FNM_EXTGLOB | File::FNM_DOTMATCH
    # The characters that make a text a glob rather than a plain name.
    GLOB_CHARACTERS = /[*?\[{]/
    private_constant :FLAGS, :GLOB_CHARACTERS

    # @return [String]
    attr_reader :glob

    # @param glob [String] valid UTF-8
    def initialize(glob)
      raise TypeError, "glob must be a String, got #{glob.class}" unless glob.is_a?(String)
      unless glob.encoding == Encoding::UTF_8 && glob.valid_encoding?
        raise ArgumentError, "glob must be valid UTF-8, got #{glob.b.inspect}"
      end

      @glob = glob.dup.freeze
      freeze
    end

    # Whether `text` holds any glob character (`* ? [ {`): a text without
    # one is a plain name.
    def self.glob?(text)
      text.match?(GLOB_CHARACTERS)
    end

    # @param name [String]
    def match?(name)
      File.fnmatch?(@glob, name, FLAGS)
    end
  end
end
