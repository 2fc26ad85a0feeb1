// Tests of the model text format (include/plucker/io/model_text.hpp).
//
//  * Round trip: every builder (every joint kind, loops, mimics) and every shared robot, fixed
//    and free-flyer, reads back into a model whose text is the same, whose names, frames,
//    limits, mimics and loop joints are equal, and whose RNEA and CRBA at random states are
//    equal to the last bit (the numbers are written exactly, so no tolerance).
//  * Refusals: a wrong header, an unknown record or joint kind, a bad number, a truncated text
//    (at every one of 300 cut points) and text after the end are ModelErrors naming the line;
//    never a crash.
#include <gtest/gtest.h>

#include <random>

#include "dynamics_test_support.hpp"
#include "plucker/io/model_text.hpp"
#include "plucker/model/builders.hpp"

namespace plucker {
namespace {

using test::load_shared_model;
using test::shared_model_path;

void expect_same_model(const Model& a, const Model& b) {
  ASSERT_EQ(a.nbodies(), b.nbodies());
  ASSERT_EQ(a.nq(), b.nq());
  ASSERT_EQ(a.nv(), b.nv());
  EXPECT_EQ(a.name(), b.name());
  EXPECT_EQ(a.body_names(), b.body_names());
  EXPECT_EQ(a.joint_names(), b.joint_names());
  EXPECT_EQ(a.parents(), b.parents());
  EXPECT_EQ(a.gravity(), b.gravity());
  EXPECT_EQ(a.lower_position_limit(), b.lower_position_limit());
  EXPECT_EQ(a.upper_position_limit(), b.upper_position_limit());
  EXPECT_EQ(a.velocity_limit(), b.velocity_limit());
  EXPECT_EQ(a.effort_limit(), b.effort_limit());
  ASSERT_EQ(a.frames().size(), b.frames().size());
  for (std::size_t k = 0; k < a.frames().size(); ++k) {
    EXPECT_EQ(a.frames()[k].name, b.frames()[k].name);
    EXPECT_EQ(a.frames()[k].body, b.frames()[k].body);
    EXPECT_EQ(a.frames()[k].X_body.E, b.frames()[k].X_body.E);
    EXPECT_EQ(a.frames()[k].X_body.r, b.frames()[k].X_body.r);
  }
  ASSERT_EQ(a.mimics().size(), b.mimics().size());
  for (std::size_t k = 0; k < a.mimics().size(); ++k) {
    EXPECT_EQ(a.mimics()[k].follower, b.mimics()[k].follower);
    EXPECT_EQ(a.mimics()[k].multiplier, b.mimics()[k].multiplier);
  }
  EXPECT_EQ(a.loop_joint_names(), b.loop_joint_names());
  EXPECT_EQ(a.num_constraints(), b.num_constraints());
  for (int i = 1; i < a.nbodies(); ++i) {
    EXPECT_EQ(a.joint(i).index(), b.joint(i).index()) << "joint " << a.joint_name(i);
    EXPECT_EQ(a.X_tree(i).E, b.X_tree(i).E);
    EXPECT_EQ(a.X_tree(i).r, b.X_tree(i).r);
    EXPECT_EQ(a.inertia(i).matrix(), b.inertia(i).matrix());
  }
  // The dynamics, bit for bit.
  Data da(a), db(b);
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 3; ++trial) {
    const VecX q = random_configuration(a, rng);
    const VecX v = VecX::Random(a.nv()), acc = VecX::Random(a.nv());
    EXPECT_EQ(rnea(a, da, q, v, acc), rnea(b, db, q, v, acc));
    EXPECT_EQ(crba(a, da, q), crba(b, db, q));
  }
}

void round_trip(const Model& model) {
  const std::string text = model_to_text(model);
  const Model back = model_from_text(text);
  EXPECT_EQ(model_to_text(back), text);
  expect_same_model(model, back);
}

TEST(ModelText, BuildersRoundTrip) {
  round_trip(build_all_joints_tree(3));  // every joint kind, the general one included
  round_trip(build_chain(7, {Vec3(0.3, -0.2, 0.9), Vec3::UnitY()}, 2));
  round_trip(build_random_tree(20, 2.0, 0.3, 0.8, 5));
  round_trip(build_humanoid(1));
  round_trip(build_four_bar());
  round_trip(build_slider_crank());
  round_trip(build_delta());
  round_trip(build_random_loops(12, 3, LoopJointType::Spherical, 2.0, 4));
}

TEST(ModelText, SharedRobotsRoundTrip) {
  int tried = 0;
  for (const char* name : {"ur5", "panda", "iiwa14", "solo12", "anymal", "hyq", "talos_full", "romeo", "icub", "pr2",
                           "simple_humanoid", "chain32", "romeo_small"}) {
    const std::string path = shared_model_path(name);
    if (path.empty()) continue;
    for (RootJoint root : {RootJoint::Fixed, RootJoint::FreeFlyer}) {
      SCOPED_TRACE(std::string(name) + (root == RootJoint::Fixed ? " fixed" : " free-flyer"));
      round_trip(load_shared_model(path, root));
      ++tried;
    }
  }
  if (tried == 0) GTEST_SKIP() << "../shared/models absent";
}

TEST(ModelText, NamesWithSpacesNewlinesAndUtf8) {
  Model m("base link");
  m.set_name("a robot\nwith two lines");
  m.add_body(0, JointRevoluteZ{}, Transform(),
             RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Mat3::Identity()), "b\xc3\xa9 1", "j 1:2");
  round_trip(m);
}

void expect_refused(const std::string& text, const std::string& fragment) {
  try {
    (void)model_from_text(text);
    ADD_FAILURE() << "accepted: " << text.substr(0, 80);
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ModelText, MalformedTextsAreModelErrors) {
  const std::string text = model_to_text(build_all_joints_tree(1));
  expect_refused("", "not a plucker model text");
  expect_refused("plucker-model 2\n", "not a plucker model text");
  std::string t = text;
  t.replace(t.find("\nbody "), 6, "\nbogus ");
  expect_refused(t, "unknown record 'bogus'");
  t = text;
  t.replace(t.find("revolute_x"), 10, "revolute_q");
  expect_refused(t, "unknown joint kind 'revolute_q'");
  t = text;
  t.replace(t.find("gravity ") + 8, 1, "#");
  expect_refused(t, "line 4: '#");
  expect_refused(text + "body\n", "text after the 'end' record");
  // Every cut is refused (or, at the very end, read): never a crash or a partial model.
  for (std::size_t k = 0; k < 300; ++k) {
    const std::size_t cut = k * (text.size() - 1) / 299;
    if (cut + 1 >= text.size()) continue;  // the whole text, or all but its final newline
    EXPECT_THROW((void)model_from_text(text.substr(0, cut)), ModelError) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace plucker
