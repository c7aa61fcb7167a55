# frozen_string_literal: true

require "minitest/autorun"
require "rake"
require "tmpdir"
require_relative "../../rakelib/packaging/darwin"

# The autoconf cache a darwin configure of a second Ruby minor starts from
# (rake gem:darwin): the generic checks another minor answered for the same
# platform, never Ruby's own nor autoconf's compiler checks, whose names stay
# while their tests change between minors. Seeding 3.3 with 3.1's whole cache
# gave its config.h `STACK_GROW_DIRECTION 0` (3.1's cross build cannot tell)
# where 3.3's own run says -1, and another `restrict`.
class DarwinConfigureCacheTest < Minitest::Test
  GENERIC = [
    "ac_cv_header_stdlib_h=${ac_cv_header_stdlib_h=yes}\n",
    "ac_cv_func_clock_gettime=${ac_cv_func_clock_gettime=yes}\n",
    "ac_cv_sizeof_long=${ac_cv_sizeof_long=8}\n",
    "ac_cv_type_long_long=${ac_cv_type_long_long=yes}\n",
    "ac_cv_member_struct_stat_st_mtimespec=${ac_cv_member_struct_stat_st_mtimespec=yes}\n",
    "ac_cv_lib_dl_dlopen=${ac_cv_lib_dl_dlopen=yes}\n",
    "ac_cv_have_decl_sys_nerr=${ac_cv_have_decl_sys_nerr=yes}\n"
  ].freeze
  OWN = [
    "rb_cv_stack_grow_dir_arm64=${rb_cv_stack_grow_dir_arm64=0}\n",
    "ac_cv_c_restrict=${ac_cv_c_restrict=__restrict}\n",
    "ac_cv_env_CC_value=/somewhere/zig-cc\n",
    "ac_cv_prog_cc_c99=\n"
  ].freeze

  def configure_cache(platform_dir, minor, sibling: {})
    sibling.each do |other, lines|
      FileUtils.mkdir_p(File.join(platform_dir, other))
      File.write(File.join(platform_dir, other, "config.cache"), "# autoconf's header\n#{lines.join}")
    end
    dir = File.join(platform_dir, minor)
    FileUtils.mkdir_p(dir)
    LeaseMachinesPackaging.configure_cache(dir)
  end

  def test_the_first_minor_of_a_platform_starts_from_an_empty_cache
    Dir.mktmpdir do |platform_dir|
      cache = configure_cache(platform_dir, "3.1")

      assert_equal File.join(platform_dir, "3.1", "config.cache"), cache
      assert_equal "", File.read(cache)
    end
  end

  def test_a_later_minor_takes_the_generic_answers_and_none_of_the_others
    Dir.mktmpdir do |platform_dir|
      cache = configure_cache(platform_dir, "3.3", sibling: { "3.1" => GENERIC + OWN })

      assert_equal GENERIC.join, File.read(cache)
    end
  end

  def test_a_minor_configured_again_does_not_start_from_its_own_old_answers
    Dir.mktmpdir do |platform_dir|
      FileUtils.mkdir_p(File.join(platform_dir, "3.3"))
      File.write(File.join(platform_dir, "3.3", "config.cache"), GENERIC.first)
      cache = configure_cache(platform_dir, "3.3", sibling: { "3.1" => [GENERIC.last] })

      assert_equal GENERIC.last, File.read(cache)
    end
  end

  def test_answers_two_minors_share_are_written_once
    Dir.mktmpdir do |platform_dir|
      cache = configure_cache(platform_dir, "3.4", sibling: { "3.1" => GENERIC, "3.3" => GENERIC })

      assert_equal GENERIC.join, File.read(cache)
    end
  end
end
